// The beat timing's own noise (beats/timing-noise.ts) and the HRV rule built on it: a clean pulse
// train has almost none and keeps its HRV; the same train under noise has RMSSD inflated by its
// timing noise, which the estimate sees, and the rule withholds HRV there.
import { describe, expect, it } from 'vitest';
import { generatePhantom, estimateOffline } from '@vitals/engine';
import { hrvAboveTimingNoise, templateBeatTimes, timingNoiseMs } from '../src/beats/timing-noise.js';
import { pulseToVitals } from '../src/vitals/pulse-vitals.js';

const FS = 30;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A PPG-like train of systolic Gaussians at beats with respiratory variability, plus white noise. */
function train(noise: number, seed: number): { x: Float64Array; beats: number[] } {
  const r = rng(seed);
  const beats: number[] = [];
  for (let t = 0.5; t < 60;) {
    beats.push(t);
    t += 0.85 + 0.04 * Math.sin(2 * Math.PI * 0.25 * t);
  }
  const x = new Float64Array(60 * FS);
  for (let i = 0; i < x.length; i++) {
    const t = i / FS;
    let v = 0;
    for (const b of beats)
      if (Math.abs(t - b) < 0.6)
        v += Math.exp(-0.5 * ((t - b) / 0.08) ** 2) + 0.4 * Math.exp(-0.5 * ((t - b - 0.3) / 0.1) ** 2);
    x[i] = v + noise * Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
  }
  return { x, beats };
}

describe('beat timing noise', () => {
  it('matched-filter times land on the true beats of a clean train', () => {
    const { x, beats } = train(0, 1);
    const peaks = beats.filter((b) => b > 1 && b < 59);
    const t = templateBeatTimes(x, FS, 1 / 0.85, peaks);
    const offset = t[0] - peaks[0];
    for (let i = 0; i < t.length; i++) expect(Math.abs(t[i] - peaks[i] - offset)).toBeLessThan(0.004);
  });

  it('is small on a clean train, and HRV passes the rule', () => {
    const { x } = train(0.01, 2);
    const v = pulseToVitals({ pulse: x, sampleRateHz: FS, hrHz: 1 / 0.85, skipBreathing: true });
    expect(v.timingNoiseMs).toBeLessThan(3);
    expect(hrvAboveTimingNoise(v.hrv!.rmssdMs, v.timingNoiseMs)).toBe(true);
  });

  it('grows with noise, and HRV inflated by it fails the rule', () => {
    const clean = pulseToVitals({ pulse: train(0.01, 3).x, sampleRateHz: FS, hrHz: 1 / 0.85, skipBreathing: true });
    const noisy = pulseToVitals({ pulse: train(0.6, 3).x, sampleRateHz: FS, hrHz: 1 / 0.85, skipBreathing: true });
    expect(noisy.hrv!.rmssdMs).toBeGreaterThan(2 * clean.hrv!.rmssdMs);
    expect(noisy.timingNoiseMs).toBeGreaterThan(4 * clean.timingNoiseMs);
    expect(hrvAboveTimingNoise(noisy.hrv!.rmssdMs, noisy.timingNoiseMs)).toBe(false);
  });

  it('is NaN with fewer than three accepted intervals', () => {
    expect(timingNoiseMs(new Float64Array(100), FS, 1, [0.5, 1.5], [1])).toBeNaN();
  });
});

describe('HRV publication on the phantom', () => {
  it('withholds a good capture’s HRV that its timing noise inflated, keeps a strong pulse’s', () => {
    const weak = generatePhantom({ durationSec: 60, heartRateBpm: 75, pulseAmplitude: 0.01, seed: 105 });
    const m = estimateOffline(weak.packets);
    expect(m.quality.level).toBe('good');
    expect(m.hrv).toBeNull();
    const strong = generatePhantom({ durationSec: 60, heartRateBpm: 72, pulseAmplitude: 0.02, noiseStd: 1, seed: 61 });
    const s = estimateOffline(strong.packets);
    expect(s.hrv).not.toBeNull();
    expect(Math.abs(s.hrv!.rmssdMs - strong.truth.rmssdMs)).toBeLessThanOrEqual(15);
  });
});
