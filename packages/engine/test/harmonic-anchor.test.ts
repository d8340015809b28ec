// The capture rate's anchor and the harmonic (rate/capture-rate.ts). A clean 25 s phantom at 55 bpm
// (seed 2) had its final on the double, 112 bpm, graded good. Mechanism: the anchor was the plain
// peak of the reference-weighted averaged spectrum; the phantom's band-limited pulse at 45–55 bpm
// has its 2nd harmonic at 0.5–1.5× the fundamental's power, and the two pulse-less references'
// noise-level humps (each can divide a bin by up to 5) happened to sit on the fundamental, so the
// double won. The anchor is now picked after a harmonic check (`harmonicCheck`, default on).
import { describe, expect, it } from 'vitest';
import { buildRgbTrace, estimateOffline, generatePhantom } from '@vitals/engine';
import { captureTiming } from '../src/estimators/analyze.js';
import { resampleUniform } from '../src/dsp/resample.js';
import { referencedPulses } from '../src/pulse/background-reference.js';
import { REST_BAND } from '../src/pulse/pulse-signals.js';
import { captureHeartRate } from '../src/rate/capture-rate.js';

/** The POS pulse and the references as the offline chain makes them (estimators/analyze.ts). */
function chainPulses(bpm: number, sec: number, seed: number) {
  const { packets, truth } = generatePhantom({ durationSec: sec, heartRateBpm: bpm, seed });
  const trace = buildRgbTrace(packets);
  const fs = captureTiming(trace.tMicros, trace.n).sampleRateHz;
  const bg = trace.bg!;
  const u = resampleUniform(trace.tMicros, [trace.r, trace.g, trace.b, bg.r, bg.g, bg.b, trace.texture!], fs, {
    to: trace.n,
  });
  const [r, g, b, br, bgg, bb, tex] = u.channels;
  const p = referencedPulses({ r, g, b }, { r: br, g: bgg, b: bb }, fs, REST_BAND, { texture: tex });
  return { pos: p.pos, refs: p.noises, fs, truthBpm: truth.heartRateBpm };
}

describe('capture-rate anchor on the harmonic (phantom 55 bpm, 25 s, seed 2)', () => {
  const { pos, refs, fs, truthBpm } = chainPulses(55, 25, 2);
  const rate = (references: Float64Array[], harmonicCheck = false) =>
    captureHeartRate(pos, fs, { band: REST_BAND, references, harmonicCheck }).hrBpm;

  it('without the harmonic check, both references put the rate on the double', () => {
    expect(refs).toHaveLength(2);
    expect(Math.abs(rate(refs) - 2 * truthBpm)).toBeLessThan(5);
  });

  it('with either reference alone, or with the harmonic check (the default), it is the rate', () => {
    expect(Math.abs(rate([refs[0]]) - truthBpm)).toBeLessThan(3);
    expect(Math.abs(rate([refs[1]]) - truthBpm)).toBeLessThan(3);
    expect(Math.abs(rate(refs, true) - truthBpm)).toBeLessThan(3);
    expect(Math.abs(captureHeartRate(pos, fs, { band: REST_BAND, references: refs }).hrBpm - truthBpm)).toBeLessThan(3);
  });
});

// Still published at the double (expected failures, so that a fix shows up here): at 45–50 bpm the
// 0.7 Hz band edge leaves the fundamental at 0.25–0.65 of the harmonic's power, and the credited
// fundamental still loses or ties (45 bpm 40 s seed 1: 90.2, good; 50 bpm 40 s seed 1: 100.7, fair).
// After the credit (0.5 of the excess over the in-band mean) the fundamental is at 0.94 and 0.81 of
// the double; the references' penalty (the phantom's background and texture references carry the
// pulse) cuts the fundamental by ×4.5 and the double by ×14 at 45 bpm. Crediting the full excess
// (1 instead of 0.5) anchors 45 bpm at 45.2 and withholds 50 bpm, keeps every published ubfc2 and
// null figure (282 gate captures), but moved the chain rate of a 30 s media-path part of ubfc2
// subject 11 from 122.5 to 57.9 bpm (unpublished): a real capture put on its sub-harmonic, so it
// was not adopted.
const KNOWN_DOUBLE = [
  { bpm: 45, sec: 40, seed: 1 },
  { bpm: 50, sec: 40, seed: 1 },
];
const isKnown = (c: { bpm: number; sec: number; seed: number }) =>
  KNOWN_DOUBLE.some((k) => k.bpm === c.bpm && k.sec === c.sec && k.seed === c.seed);
const sweep = [45, 50, 55, 60, 65, 70].flatMap((bpm) =>
  [20, 40, 60].flatMap((sec) => [1, 2, 3].map((seed) => ({ bpm, sec, seed }))),
);

/** The published final heart rate (null when withheld) and the phantom's rate. */
function final(bpm: number, sec: number, seed: number) {
  const { packets, truth } = generatePhantom({ durationSec: sec, heartRateBpm: bpm, seed });
  return { hr: estimateOffline(packets).cardiac.heartRate?.value ?? null, truthBpm: truth.heartRateBpm };
}

describe('clean captures at 45–70 bpm: the final is within 5 bpm of the rate or withheld, never the double', () => {
  it.each(sweep.filter((c) => !isKnown(c)))('$bpm bpm, $sec s, seed $seed', ({ bpm, sec, seed }) => {
    const { hr, truthBpm } = final(bpm, sec, seed);
    if (hr !== null) expect(Math.abs(hr - truthBpm)).toBeLessThanOrEqual(5);
  });

  it.fails.each(KNOWN_DOUBLE)('known: $bpm bpm, $sec s, seed $seed is still published at the double', (c) => {
    const { hr, truthBpm } = final(c.bpm, c.sec, c.seed);
    expect(hr === null || Math.abs(hr - truthBpm) <= 5).toBe(true);
  });
});
