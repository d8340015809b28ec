// The capture rate's anchor and the harmonic (rate/capture-rate.ts). A clean 25 s phantom at 55 bpm
// (seed 2) has its final on the double, 112 bpm, graded good. Mechanism: the anchor is the plain peak
// of the reference-weighted averaged spectrum; the phantom's band-limited pulse at 45–55 bpm has its
// 2nd harmonic at 0.5–1.5× the fundamental's power, and the two pulse-less references' noise-level
// humps (each can divide a bin by up to 5) happen to sit on the fundamental, so the double wins.
// The window score's harmonic check applied to the anchor (`harmonicCheck`) keeps a sweep of clean
// captures on the rate; it is off by default because on ubfc2 subject 10 it puts the anchor on codec
// pumping at half the pulse (docs/decisions.md, Engine).
import { describe, expect, it } from 'vitest';
import { buildRgbTrace, generatePhantom } from '@vitals/engine';
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

  it('with both references and no harmonic check the rate is the double', () => {
    expect(refs).toHaveLength(2);
    expect(Math.abs(rate(refs) - 2 * truthBpm)).toBeLessThan(5);
  });

  it('with either reference alone, or with the harmonic check, it is the rate', () => {
    expect(Math.abs(rate([refs[0]]) - truthBpm)).toBeLessThan(3);
    expect(Math.abs(rate([refs[1]]) - truthBpm)).toBeLessThan(3);
    expect(Math.abs(rate(refs, true) - truthBpm)).toBeLessThan(3);
  });
});

// Still on the double with the check (expected failures, so that a fix shows up here): where the
// 0.7 Hz band edge leaves the fundamental at ~0.65 of the harmonic's power or less, the credited
// fundamental ties with the double. The two 20 s captures are withheld by the quality gate at the
// final; 50 bpm 40 s seed 1 is published (fair) at 100.7.
const KNOWN_DOUBLE = [
  { bpm: 45, sec: 20, seed: 1 },
  { bpm: 50, sec: 20, seed: 1 },
  { bpm: 50, sec: 40, seed: 1 },
];
const isKnown = (c: { bpm: number; sec: number; seed: number }) =>
  KNOWN_DOUBLE.some((k) => k.bpm === c.bpm && k.sec === c.sec && k.seed === c.seed);
const sweep = [45, 50, 55, 60, 65, 70].flatMap((bpm) =>
  [20, 40, 60].flatMap((sec) => [1, 2, 3].map((seed) => ({ bpm, sec, seed }))),
);

describe('with the harmonic check, clean captures at 45–70 bpm are anchored on the rate, not the double', () => {
  it.each(sweep.filter((c) => !isKnown(c)))('$bpm bpm, $sec s, seed $seed', ({ bpm, sec, seed }) => {
    const { pos, refs, fs, truthBpm } = chainPulses(bpm, sec, seed);
    const r = captureHeartRate(pos, fs, { band: REST_BAND, references: refs, harmonicCheck: true });
    expect(Math.abs(r.hrBpm - truthBpm)).toBeLessThanOrEqual(5);
  });

  it.fails.each(KNOWN_DOUBLE)('known: $bpm bpm, $sec s, seed $seed is still on the double', ({ bpm, sec, seed }) => {
    const { pos, refs, fs, truthBpm } = chainPulses(bpm, sec, seed);
    const r = captureHeartRate(pos, fs, { band: REST_BAND, references: refs, harmonicCheck: true });
    expect(Math.abs(r.hrBpm - truthBpm)).toBeLessThanOrEqual(5);
  });
});
