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
import {
  captureHeartRate,
  PERIOD_DOUBLING_AC_GAIN,
  PERIOD_DOUBLING_COUPLING,
  periodDoubling,
} from '../src/rate/capture-rate.js';

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
  const rate = (references: Float64Array[], harmonicCheck = false, periodCheck = false) =>
    captureHeartRate(pos, fs, { band: REST_BAND, references, harmonicCheck, periodCheck }).hrBpm;

  it('without the harmonic check and the period-doubling test, both references put the rate on the double', () => {
    expect(refs).toHaveLength(2);
    expect(Math.abs(rate(refs) - 2 * truthBpm)).toBeLessThan(5);
  });

  it('the period-doubling test alone also takes it back to the rate', () => {
    expect(Math.abs(rate(refs, false, true) - truthBpm)).toBeLessThan(3);
  });

  it('with either reference alone, or with the harmonic check (the default), it is the rate', () => {
    expect(Math.abs(rate([refs[0]]) - truthBpm)).toBeLessThan(3);
    expect(Math.abs(rate([refs[1]]) - truthBpm)).toBeLessThan(3);
    expect(Math.abs(rate(refs, true) - truthBpm)).toBeLessThan(3);
    expect(Math.abs(captureHeartRate(pos, fs, { band: REST_BAND, references: refs }).hrBpm - truthBpm)).toBeLessThan(3);
  });
});

// At 45–50 bpm the 0.7 Hz band edge leaves the fundamental at 0.25–0.65 of the harmonic's power and
// the references' penalty (the phantom's background and texture references carry the pulse) cuts
// the fundamental by ×4.5 and the double by ×14 at 45 bpm, so the credited fundamental still lost:
// 45 bpm 40 s seed 1 was published at 90.2 (good), 50 bpm 40 s seed 1 at 100.7 (fair). Crediting the
// full harmonic excess fixed both but put a 30 s media-path part of ubfc2 subject 11 (122.5 bpm) on
// 57.9. The period-doubling test (`periodDoubling`) reads the pulse itself: it anchors 45 bpm at 45.2
// and withholds 50 bpm (its chain rate 50.3).
const sweep = [45, 50, 55, 60, 65, 70].flatMap((bpm) =>
  [20, 40, 60].flatMap((sec) => [1, 2, 3].map((seed) => ({ bpm, sec, seed }))),
);

/** The published final heart rate (null when withheld) and the phantom's rate. */
function final(bpm: number, sec: number, seed: number) {
  const { packets, truth } = generatePhantom({ durationSec: sec, heartRateBpm: bpm, seed });
  const m = estimateOffline(packets);
  return {
    hr: m.cardiac.heartRate?.value ?? null,
    internal: m.stats.internalHeartRateBpm,
    truthBpm: truth.heartRateBpm,
  };
}

describe('clean captures at 45–70 bpm: the final is within 5 bpm of the rate or withheld, never the double', () => {
  it.each(sweep)('$bpm bpm, $sec s, seed $seed', ({ bpm, sec, seed }) => {
    const { hr, truthBpm } = final(bpm, sec, seed);
    if (hr !== null) expect(Math.abs(hr - truthBpm)).toBeLessThanOrEqual(5);
  });

  it('the two captures once published at the double: 45 bpm at the rate, 50 bpm withheld at the rate', () => {
    const a = final(45, 40, 1);
    expect(a.hr).not.toBeNull();
    expect(Math.abs(a.hr! - a.truthBpm)).toBeLessThanOrEqual(1);
    const b = final(50, 40, 1);
    expect(b.hr).toBeNull();
    expect(Math.abs(b.internal! - b.truthBpm)).toBeLessThanOrEqual(2);
  });
});

// Seeds not looked at while the test's thresholds were chosen (those were 1–3 above and the ubfc2
// captures): the chain's rate, published or not, is never the double of a 45–55 bpm phantom, and a
// phantom at 90–100 bpm (whose half is in the band) is never moved to its half.
describe('period-doubling test on fresh seeds', () => {
  const fresh = [45, 50, 55, 90, 100].flatMap((bpm) =>
    [25, 40].flatMap((sec) => [21, 22, 23].map((seed) => ({ bpm, sec, seed }))),
  );
  it.each(fresh)('$bpm bpm, $sec s, seed $seed', ({ bpm, sec, seed }) => {
    const { hr, internal, truthBpm } = final(bpm, sec, seed);
    expect(Math.abs(internal! - truthBpm)).toBeLessThanOrEqual(5);
    if (hr !== null) expect(Math.abs(hr - truthBpm)).toBeLessThanOrEqual(5);
  });
});

describe('periodDoubling: the statistics behind the test', () => {
  it('on a capture anchored on its double: f/2 and f phase-locked, the pulse repeats every 2/f', () => {
    const { pos, refs, fs, truthBpm } = chainPulses(45, 40, 1);
    const off = captureHeartRate(pos, fs, { band: REST_BAND, references: refs, periodCheck: false });
    expect(Math.abs(off.anchorBpm - 2 * truthBpm)).toBeLessThan(5);
    const len = Math.round(10 * fs);
    const ends: number[] = [];
    for (let end = len; end <= pos.length; end += Math.round(fs)) ends.push(end);
    const d = periodDoubling(pos, fs, off.anchorBpm / 60, ends, len);
    expect(d.coupling).toBeGreaterThanOrEqual(PERIOD_DOUBLING_COUPLING);
    expect(d.acGain).toBeGreaterThanOrEqual(PERIOD_DOUBLING_AC_GAIN);
    const on = captureHeartRate(pos, fs, { band: REST_BAND, references: refs });
    expect(on.halved).toBe(true);
    expect(Math.abs(on.hrBpm - truthBpm)).toBeLessThan(3);
  });

  it('on a capture at its rate with the half in band (90 bpm): neither statistic passes', () => {
    const { pos, refs, fs, truthBpm } = chainPulses(90, 40, 1);
    const c = captureHeartRate(pos, fs, { band: REST_BAND, references: refs });
    expect(c.halved).toBe(false);
    expect(Math.abs(c.hrBpm - truthBpm)).toBeLessThan(3);
    const len = Math.round(10 * fs);
    const d = periodDoubling(pos, fs, c.anchorBpm / 60, [len, 2 * len, pos.length], len);
    expect(d.coupling).toBeLessThan(PERIOD_DOUBLING_COUPLING);
    expect(d.acGain).toBeLessThan(PERIOD_DOUBLING_AC_GAIN);
  });

  it('on noise at f/2 beside a pulse at f (independent phases): no coupling', () => {
    const fs = 30;
    const n = 40 * fs;
    const x = new Float64Array(n);
    let s = 7;
    const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 * Math.PI;
    // A pulse at 2 Hz; a component at 1 Hz whose phase jumps every 2 s: as strong as the pulse.
    let phase = rnd();
    for (let i = 0; i < n; i++) {
      if (i % (2 * fs) === 0) phase = rnd();
      x[i] = Math.sin((2 * Math.PI * 2 * i) / fs) + Math.sin((2 * Math.PI * 1 * i) / fs + phase);
    }
    const len = 10 * fs;
    const d = periodDoubling(x, fs, 2, [len, 2 * len, 3 * len, n], len);
    expect(d.coupling).toBeLessThan(0.5);
  });
});
