import { describe, expect, it } from 'vitest';
import { contactReference, parseGroundTruth, ppgOnGrid } from './ubfc2-hrv.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A finger-PPG-like waveform (systolic bump + smaller diastolic bump per beat) at jittery, ms-rounded times. */
function syntheticGroundTruth(rrMs: number[], seed: number): { text: string; rrMs: number[] } {
  const r = rng(seed);
  const beats = [0.4];
  for (const v of rrMs) beats.push(beats[beats.length - 1] + v / 1000);
  const t: number[] = [];
  for (let x = 0; x < beats[beats.length - 1] + 0.5; x += 0.034 + (r() - 0.5) * 0.02)
    t.push(Math.round(x * 1000) / 1000);
  t.splice(100, 0, t[99]); // a repeated timestamp, as in some subjects
  const ppg = t.map((s) => {
    let v = 0;
    for (const b of beats) v += Math.exp(-(((s - b) / 0.06) ** 2)) + 0.4 * Math.exp(-(((s - b - 0.25) / 0.08) ** 2));
    return v;
  });
  const line = (a: number[]): string => a.map((v) => v.toExponential(7)).join('  ');
  return { text: `${line(ppg)}\n${line(t.map(() => 70))}\n${line(t)}\n`, rrMs };
}

describe('ubfc2 contact-PPG reference', () => {
  it('drops repeated timestamps and grids at the mean rate', () => {
    const { text } = syntheticGroundTruth(Array(60).fill(800), 1);
    const gt = parseGroundTruth(text);
    const g = ppgOnGrid(gt);
    expect(g.dropped).toBe(1);
    expect(g.sampleRateHz).toBeGreaterThan(28.5);
    expect(g.sampleRateHz).toBeLessThan(30.5);
  });

  it('recovers the beat rate and the HRV of a known RR series', () => {
    const r = rng(7);
    const rr = Array.from({ length: 80 }, (_, i) => 700 + 40 * Math.sin((2 * Math.PI * i) / 5) + (r() - 0.5) * 40);
    const { text } = syntheticGroundTruth(rr, 2);
    const ref = contactReference(parseGroundTruth(text));
    const mean = rr.reduce((a, b) => a + b, 0) / rr.length;
    const diffs = rr.slice(1).map((v, i) => v - rr[i]);
    const rmssd = Math.sqrt(diffs.reduce((a, d) => a + d * d, 0) / diffs.length);
    const sdnn = Math.sqrt(rr.reduce((a, v) => a + (v - mean) ** 2, 0) / (rr.length - 1));
    expect(ref.hrv).not.toBeNull();
    expect(Math.abs(ref.beatHrBpm - 60000 / mean)).toBeLessThan(1);
    expect(Math.abs(ref.hrv!.sdnnMs - sdnn)).toBeLessThan(5);
    expect(Math.abs(ref.hrv!.rmssdMs - rmssd)).toBeLessThan(5);
  });
});
