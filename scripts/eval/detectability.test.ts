import { describe, expect, it } from 'vitest';
import { detectOutcomes, rankAt, signFlipP, summarize, welch, type DetectItem } from './detectability.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function gaussian(r: () => number): number {
  return Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
}

const FS = 15;
const REFS = [58, 64, 70, 77, 83, 90, 97, 104, 111, 118];

function items(pulseAmplitude: number, seed: number): DetectItem[] {
  const r = rng(seed);
  return REFS.map((bpm) => {
    const pulse = Array.from(
      { length: 60 * FS },
      (_, i) => pulseAmplitude * Math.sin((2 * Math.PI * bpm * i) / (60 * FS)) + gaussian(r),
    );
    return { pulse, sampleRateHz: FS, referenceBpm: bpm };
  });
}

describe('pulse detectability', () => {
  it('sign-flip p-value is exact for small sets', () => {
    expect(signFlipP([1, 1, 1])).toBeCloseTo(1 / 8, 12);
    expect(signFlipP([1, -1])).toBeCloseTo(3 / 4, 12);
    expect(signFlipP([2, -1, -1])).toBeCloseTo(5 / 8, 12);
  });

  it('ranks the bin at a strong tone at the top of the band', () => {
    const x = Array.from({ length: 40 * FS }, (_, i) => Math.sin((2 * Math.PI * 1.3 * i) / FS));
    const s = welch(x, FS);
    expect(rankAt(s, 1.3)).toBeGreaterThan(0.95);
    expect(rankAt(s, 2.0)).toBeLessThan(0.5);
  });

  it('finds a weak pulse at each recording’s own rate', () => {
    const d = summarize(detectOutcomes(items(0.25, 1)));
    expect(d.n).toBe(REFS.length);
    expect(d.ownRank).toBeGreaterThan(d.otherRank + 0.1);
    expect(d.pValue).toBeLessThan(0.01);
  });

  it('finds nothing in pulse-less noise', () => {
    const d = summarize(detectOutcomes(items(0, 2)));
    expect(d.pValue).toBeGreaterThan(0.05);
    expect(Math.abs(d.ownRank - d.otherRank)).toBeLessThan(0.1);
  });
});
