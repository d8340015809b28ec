import { describe, expect, it } from 'vitest';
import { QUALITY_REASON_CODES, QUALITY_REASON_HINTS, quantizeTelemetry, type Packet } from '@vitals/protocol';
import {
  estimateOffline,
  generatePhantom,
  reasonsFromFacts,
  REASON_THRESHOLDS as T,
  StreamingEstimator,
  traceFromRgb,
  type GateVerdict,
} from '@vitals/engine';
import { luminanceLine, type CaptureFacts } from '../src/quality/capture-facts.js';

// Quality reasons (docs/engine.md, "Quality reasons"): the pure thresholds, then each reason from a
// phantom capture degraded on purpose (the real-video degradations: packages/server/test/
// quality-reasons-video.test.ts).

const clean: CaptureFacts = {
  durationSec: 60,
  faceLostShare: 0,
  effectiveFps: 30,
  dropShare: 0,
  movingShare: 0,
  faceLuma: 150,
  clippedShare: 0,
  flicker: { freqHz: 10, share: 0.05, amplitude: 0.0005 },
  bitsPerPixel: 0.05,
};
const published: GateVerdict = { published: true, level: 'good' };
const withheld: GateVerdict = { published: false, level: 'poor' };
const codes = (f: Partial<CaptureFacts>, v = published) => reasonsFromFacts({ ...clean, ...f }, v).map((r) => r.code);

describe('reasonsFromFacts (thresholds)', () => {
  it('gives nothing for a clean published capture and only no_pulse for a clean withheld one', () => {
    expect(codes({})).toEqual([]);
    const r = reasonsFromFacts(clean, withheld);
    expect(r).toEqual([{ code: 'no_pulse', hint: QUALITY_REASON_HINTS.no_pulse }]);
  });

  it.each<[string, Partial<CaptureFacts>, Partial<CaptureFacts>]>([
    ['face_lost', { faceLostShare: T.faceLostShare }, { faceLostShare: T.faceLostShare - 0.01 }],
    ['motion', { movingShare: T.movingShare }, { movingShare: T.movingShare - 0.01 }],
    ['low_light', { faceLuma: T.minFaceLuma - 0.1 }, { faceLuma: T.minFaceLuma }],
    ['overexposed', { clippedShare: T.clippedShare }, { clippedShare: T.clippedShare - 0.01 }],
    [
      'flicker',
      { flicker: { freqHz: 10, share: T.flickerShare, amplitude: T.flickerAmplitude } },
      { flicker: { freqHz: 10, share: T.flickerShare, amplitude: T.flickerAmplitude * 0.9 } },
    ],
    ['low_frame_rate', { effectiveFps: T.minFps - 0.1 }, { effectiveFps: T.minFps }],
    ['low_frame_rate', { dropShare: T.dropShare }, { dropShare: T.dropShare - 0.01 }],
    ['compression', { bitsPerPixel: T.severeBitsPerPixel * 0.99 }, { bitsPerPixel: T.severeBitsPerPixel }],
    ['too_short', { durationSec: T.minDurationSec - 0.1 }, { durationSec: T.minDurationSec }],
  ])('%s fires at its threshold and not below it', (code, on, off) => {
    expect(codes(on)).toEqual([code]);
    expect(codes(off)).toEqual([]);
  });

  it('hrv_withheld: only when the rate was published and HRV and stress were not', () => {
    const r = reasonsFromFacts(clean, { ...published, hrvWithheld: true });
    expect(r).toEqual([{ code: 'hrv_withheld', hint: QUALITY_REASON_HINTS.hrv_withheld }]);
    expect(codes({}, { ...withheld, hrvWithheld: true })).toEqual(['no_pulse']);
    // What degraded the capture comes first, then what it cost.
    expect(codes({ movingShare: 0.9 }, { ...published, hrvWithheld: true })).toEqual(['motion', 'hrv_withheld']);
  });

  it('takes the verdict as an input: weak compression and a short capture count only when withheld', () => {
    const f = { bitsPerPixel: (T.severeBitsPerPixel + T.weakBitsPerPixel) / 2, durationSec: 20 };
    expect(codes(f, published)).toEqual([]);
    expect(codes(f, withheld)).toEqual(['compression', 'too_short']);
  });

  it("too_short is judged on the whole capture's length, not the followed face's", () => {
    // Eight seconds of face in a 60 s capture: keep the face in view, not record longer.
    expect(codes({ durationSec: 8, captureSec: 60, faceLostShare: 0.87 }, withheld)).toEqual(['face_lost']);
    // No face at all (presence 0): nothing says how long the capture was, and the face is the fix.
    expect(codes({ durationSec: 0, captureSec: Infinity, faceLostShare: 1 }, withheld)).toEqual(['face_lost']);
    // A short capture stays short, with its own length as the value.
    const r = reasonsFromFacts({ ...clean, durationSec: 4, captureSec: 8, faceLostShare: 0.5 }, withheld);
    expect(r.map((x) => [x.code, x.value])).toEqual([
      ['face_lost', 0.5],
      ['too_short', 8],
    ]);
  });

  it('lists reasons in the stable code order with the canonical hint and the measured value', () => {
    const r = reasonsFromFacts(
      { ...clean, durationSec: 5, faceLuma: 20, faceLostShare: 0.3, effectiveFps: 12, bitsPerPixel: 0.001 },
      withheld,
    );
    expect(r.map((x) => x.code)).toEqual(['face_lost', 'low_light', 'low_frame_rate', 'compression', 'too_short']);
    for (const x of r) expect(x.hint).toBe(QUALITY_REASON_HINTS[x.code]);
    expect(r.map((x) => x.value)).toEqual([0.3, 20, 12, 0.001, 5]);
    const order = r.map((x) => QUALITY_REASON_CODES.indexOf(x.code));
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });
});

describe('luminanceLine', () => {
  it('measures a tone in the luminance: its frequency, its share and its RMS', () => {
    const fs = 30;
    const n = 30 * fs;
    const t = Array.from({ length: n }, (_, i) => Math.round((i / fs) * 1e6));
    const rng = (i: number) => Math.sin(i * 12.9898) * 43758.5453 - Math.floor(Math.sin(i * 12.9898) * 43758.5453);
    const y = t.map((_, i) => 120 * (1 + 0.01 * Math.sin(2 * Math.PI * 9 * (i / fs))) + (rng(i) - 0.5) * 0.5);
    const line = luminanceLine(traceFromRgb(t, y, y, y), fs, 72)!;
    expect(line.freqHz).toBeCloseTo(9, 1);
    expect(line.amplitude).toBeCloseTo(0.01 / Math.SQRT2, 3);
    expect(line.share).toBeGreaterThan(0.9);
  });
});

/** The phantom's packets with every crop's pixels passed through `f` (value, time in s). */
function degrade(packets: Iterable<Packet>, f: (v: number, tSec: number) => number): Packet[] {
  const out: Packet[] = [];
  for (const p of packets) {
    if (p.type !== 1) {
      out.push(p);
      continue;
    }
    const px = new Uint8Array(p.pixels.length);
    for (let i = 0; i < px.length; i++) px[i] = Math.max(0, Math.min(255, Math.round(f(p.pixels[i], p.tMicros / 1e6))));
    out.push({ ...p, pixels: px });
  }
  return out;
}

const phantom = (o: Parameters<typeof generatePhantom>[0] = {}) =>
  generatePhantom({ durationSec: 30, heartRateBpm: 72, seed: 17, ...o }).packets;
const reasonCodes = (packets: Iterable<Packet>, source?: { bitsPerPixel?: number }) =>
  estimateOffline(packets, { source }).quality.reasons.map((r) => r.code);

describe('reasons from degraded phantom captures', () => {
  it('a clean capture whose beats carry HRV is published with no reason', () => {
    // A strong pulse (2 %, low sensor noise; docs/accuracy.md's "strong pulse (HRV)" phantom).
    const m = estimateOffline(
      phantom({ durationSec: 60, heartRateBpm: 70, pulseAmplitude: 0.02, noiseStd: 1, seed: 21 }),
    );
    expect(m.cardiac.heartRate).not.toBeNull();
    expect(m.hrv).not.toBeNull();
    expect(m.quality.reasons).toEqual([]);
  });

  it('hrv_withheld: a rate published from beats too noisy for HRV (the default 1 % pulse)', () => {
    const m = estimateOffline(phantom());
    expect(m.cardiac.heartRate).not.toBeNull();
    expect(m.hrv).toBeNull();
    expect(m.stress).toBeNull();
    expect(m.quality.reasons).toEqual([{ code: 'hrv_withheld', hint: QUALITY_REASON_HINTS.hrv_withheld }]);
  });

  it('too_short: 8 s', () => {
    const m = estimateOffline(phantom({ durationSec: 8 }));
    expect(m.quality.reasons).toEqual([{ code: 'too_short', hint: QUALITY_REASON_HINTS.too_short, value: 8 }]);
  });

  it('no_pulse: a face without pulse, nothing else wrong', () => {
    const m = estimateOffline(phantom({ pulseAmplitude: 0, durationSec: 40 }));
    expect(m.cardiac.heartRate).toBeNull();
    expect(m.quality.reasons.map((r) => r.code)).toEqual(['no_pulse']);
  });

  it('low_frame_rate: a 12 fps camera, and a 30 fps camera losing 30 % of its frames', () => {
    const slow = estimateOffline(phantom({ fps: 12 })).quality.reasons;
    expect(slow.map((r) => r.code)).toContain('low_frame_rate');
    expect(slow.find((r) => r.code === 'low_frame_rate')!.value).toBeCloseTo(12, 0);
    expect(reasonCodes(phantom({ dropRate: 0.3 }))).toContain('low_frame_rate');
    expect(reasonCodes(phantom({ dropRate: 0.02 }))).not.toContain('low_frame_rate');
  });

  it('face_lost: no packet for 6 s of 30 (the tracker sends nothing while the face is lost)', () => {
    const cut = [...phantom()].filter((p) => p.tMicros < 12e6 || p.tMicros >= 18e6);
    const r = estimateOffline(cut).quality.reasons.find((x) => x.code === 'face_lost');
    expect(r?.value).toBeCloseTo(0.2, 1);
  });

  it("face_lost from the source's face presence: a face for 10 s of a 40 s capture, or none at all", () => {
    // The packets exist only where the face was (the tracker sends nothing without one): a camera or
    // a video that knows its share of frames with a face says so (the on-device capture, video jobs).
    const ten = [...phantom({ durationSec: 40 })].filter((p) => p.tMicros < 10e6);
    const m = estimateOffline(ten, { source: { facePresence: 0.25 } });
    expect(m.quality.reasons.map((r) => r.code)).toEqual(['face_lost']);
    expect(m.quality.reasons[0].value).toBeCloseTo(0.75, 2);
    // The same packets without the presence: only a capture too short.
    expect(reasonCodes(ten)).toEqual(['too_short']);
    // Not one frame with a face, through the live door the on-device capture uses.
    const none = new StreamingEstimator();
    expect(none.finish({ facePresence: 0 }).quality.reasons).toEqual([
      { code: 'face_lost', hint: QUALITY_REASON_HINTS.face_lost, value: 1 },
    ]);
    expect(none.finish().quality.reasons.map((r) => r.code)).toEqual(['too_short']);
  });

  it('face_lost: the time before the first crop (packets are timed from the capture start)', () => {
    const late = [...phantom({ durationSec: 24 })].filter((p) => p.tMicros >= 12e6);
    const r = estimateOffline(late).quality.reasons.find((x) => x.code === 'face_lost');
    expect(r?.value).toBeCloseTo(0.5, 1);
    // The same crops re-timed to start at 0: a face all along.
    const retimed = late.map((p) => ({ ...p, tMicros: p.tMicros - 12e6 }) as Packet);
    expect(reasonCodes(retimed)).not.toContain('face_lost');
    // A first crop within half a second (the detector's first answer) is no gap.
    const prompt = [...phantom()].filter((p) => p.tMicros >= 0.4e6);
    expect(reasonCodes(prompt)).not.toContain('face_lost');
  });

  it('low_light and overexposed: the crops darkened to a fifth, and brightened 2.5 times', () => {
    expect(reasonCodes(degrade(phantom(), (v) => v * 0.2))).toContain('low_light');
    const bright = reasonCodes(degrade(phantom(), (v) => v * 2.5));
    expect(bright).toContain('overexposed');
    expect(bright).not.toContain('low_light');
  });

  it('flicker: the light modulated at 10 Hz (100 Hz mains seen at 30 fps), ±3 %', () => {
    const m = estimateOffline(degrade(phantom(), (v, t) => v * (1 + 0.03 * Math.sin(2 * Math.PI * 10 * t))));
    const r = m.quality.reasons.find((x) => x.code === 'flicker');
    expect(r?.value).toBeCloseTo(10, 0);
  });

  it('motion: telemetry whose tracker motion score says the face moved for half the capture', () => {
    let k = 0;
    const packets = phantom({ telemetry: true }).map((p) =>
      p.type === 3 && k++ % 2 === 0 ? { ...p, slots: quantizeTelemetry({ ...base, motionScore: 0.6 }) } : p,
    );
    expect(reasonCodes(packets)).toContain('motion');
    expect(reasonCodes(phantom({ telemetry: true }))).not.toContain('motion');
  });

  it('compression: from the source video statistics, when the server knows them', () => {
    expect(reasonCodes(phantom(), { bitsPerPixel: 0.002 })).toContain('compression');
    expect(reasonCodes(phantom(), { bitsPerPixel: 0.05 })).not.toContain('compression');
  });

  it('the live door carries the same reasons (StreamingEstimator.finish)', () => {
    const packets = [...phantom({ fps: 12 })];
    const live = new StreamingEstimator();
    for (const p of packets) live.push(p);
    expect(live.finish().quality.reasons).toEqual(estimateOffline(packets).quality.reasons);
    expect(live.finish().quality.reasons.length).toBeGreaterThan(0);
  });
});

const base = {
  leftEyeOpenness: 0.8,
  rightEyeOpenness: 0.8,
  jawOpenness: 0.1,
  yawDeg: 0,
  pitchDeg: 0,
  rollDeg: 0,
  faceWidthFraction: 0.4,
  meanBrightness: 0.5,
  motionScore: 0,
};
