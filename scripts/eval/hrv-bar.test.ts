// The camera-HRV bar's measures (hrv-bar-data.ts, hrv-bar.ts): the pulse SNR grows with the pulse
// and does not count the harmonic; the tolerance and the SNR bar behave as documented.
import { describe, expect, it } from 'vitest';
import { hrvOk, publishable, pulseSnrDb, withinTol, type Outcome } from './hrv-bar-data.js';
import { calibratedRule, snrBar } from './hrv-bar.js';

const FS = 30;

function signal(amplitude: number, harmonic: number, seed: number): Float64Array {
  let s = seed >>> 0;
  const r = (): number => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
  const x = new Float64Array(60 * FS);
  for (let i = 0; i < x.length; i++) {
    const t = i / FS;
    const noise = Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
    x[i] = amplitude * Math.sin(2 * Math.PI * 1.1 * t) + harmonic * Math.sin(2 * Math.PI * 2.2 * t) + noise;
  }
  return x;
}

function outcome(snrDb: number, rmssd: number, timingNoiseMs = 3, fps = 30): Outcome {
  return {
    fps,
    amplitude: 0.02,
    kbps: null,
    seed: 1,
    snrDb,
    truthRmssd: 30,
    truthSdnn: 30,
    rmssd,
    sdnn: 30,
    timingNoiseMs,
    nnCount: 60,
    acceptedFraction: 1,
    durationSec: 60,
    level: 'good',
    hrPublished: true,
    eligible: true,
  };
}

describe('camera-HRV bar measures', () => {
  it('pulse SNR rises with the pulse, is low without one, and ignores the harmonic', () => {
    const none = pulseSnrDb(signal(0, 0, 1), FS, 66);
    const weak = pulseSnrDb(signal(0.3, 0, 1), FS, 66);
    const strong = pulseSnrDb(signal(1, 0, 1), FS, 66);
    expect(none).toBeLessThan(-5);
    expect(weak).toBeGreaterThan(none + 3);
    expect(strong).toBeGreaterThan(weak + 5);
    expect(Math.abs(pulseSnrDb(signal(1, 1, 1), FS, 66) - strong)).toBeLessThan(1);
  });

  it('tolerance is max(10 ms, 20 %), NaN never passes', () => {
    expect(withinTol(39, 30)).toBe(true);
    expect(withinTol(41, 30)).toBe(false);
    expect(withinTol(115, 100)).toBe(true);
    expect(withinTol(125, 100)).toBe(false);
    expect(withinTol(NaN, 30)).toBe(false);
    expect(hrvOk(outcome(10, 35))).toBe(true);
  });

  it('the SNR bar is the lowest SNR from which at least 80 % pass', () => {
    const os = [
      outcome(14, 31),
      outcome(13, 32),
      outcome(12, 33),
      outcome(11, 60),
      outcome(10, 34),
      outcome(9, 70),
      outcome(8, 80),
    ];
    expect(snrBar(os)).toBe(10);
    expect(snrBar([outcome(12, 80), outcome(11, 90), outcome(10, 70)])).toBeNaN();
  });

  it('the calibrated rule publishes no calibration capture outside the tolerance, and the most of the rest', () => {
    // Shares 3·noise/RMSSD: 0.15, 0.25, 0.30 (within), 0.32 at 20 fps (outside), 0.45 (outside).
    const os = [
      outcome(10, 30, 1.5, 30),
      outcome(10, 30, 2.5, 60),
      outcome(10, 30, 3, 30),
      outcome(10, 45, 4.8, 20),
      outcome(10, 45, 6.75, 30),
    ];
    // Share ≤ 0.30 from 20 or from 30 fps up both publish 3: the smaller share, then the higher floor.
    expect(calibratedRule(os, [20, 30, 60])).toEqual({ share: 0.3, minFps: 30, published: 3 });
    // A fourth capture within the tolerance at 30 fps, share 0.40: only the 30 fps floor keeps it.
    expect(calibratedRule([...os, outcome(10, 30, 4, 30)], [20, 30, 60])).toEqual({
      share: 0.4,
      minFps: 30,
      published: 4,
    });
    expect(calibratedRule([outcome(10, 80, 3)], [30])).toBeNull();
    // A floor above the webcam rate is no candidate, however many 60 fps captures it would publish:
    // shares 0.20 (30 fps, within), 0.32 (30 fps, outside), 0.34 (three at 60 fps, within).
    const at60 = [outcome(10, 30, 2, 30), outcome(10, 45, 4.8, 30), ...[1, 2, 3].map(() => outcome(10, 30, 3.4, 60))];
    expect(calibratedRule(at60, [30, 60])).toEqual({ share: 0.2, minFps: 30, published: 1 });
  });

  it('the engine rule on cached internals: withholds a noisy share, a low frame rate or a fair capture', () => {
    expect(publishable(outcome(10, 30, 1))).toBe(true);
    expect(publishable(outcome(10, 30, 5))).toBe(false);
    expect(publishable(outcome(10, 30, 1, 25))).toBe(false);
    expect(publishable({ ...outcome(10, 30, 1), level: 'fair' })).toBe(false);
  });
});
