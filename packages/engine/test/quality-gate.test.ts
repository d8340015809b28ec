import { describe, expect, it } from 'vitest';
import { estimateOffline, generatePhantom } from '@vitals/engine';
import { captureHeartRate } from '../src/rate/capture-rate.js';
import {
  assessQuality,
  heartRateConfidence,
  HR_CONFIDENCE_MAX,
  minPublishSqi,
  PUBLISH_EVIDENCE,
  pulseEvidence,
} from '../src/quality/quality.js';

// The gate publishes when one evidence statistic (the stronger of window SQI and capture-level
// agreement, each standardised against pulse-less captures of the same length) reaches PUBLISH_EVIDENCE, and the
// heart rate's confidence is mapped from the same statistic. Calibration: docs/accuracy.md.

describe('pulse evidence', () => {
  it('standardises each part against pulse-less captures of the same length', () => {
    // A null-typical capture scores near zero at every length; the same share is stronger evidence
    // on a longer capture (the null's spread shrinks with length).
    for (const d of [20, 45, 68, 120])
      expect(Math.abs(pulseEvidence(d, 0.1, 0.208 + 1.86 / d).zShare)).toBeLessThan(1e-9);
    expect(pulseEvidence(68, 0, 0.35).zShare).toBeGreaterThan(pulseEvidence(30, 0, 0.35).zShare);
    // The window-SQI part alone reaches the threshold exactly at minPublishSqi.
    for (const d of [20, 30, 60]) expect(pulseEvidence(d, minPublishSqi(d)).zSqi).toBeCloseTo(PUBLISH_EVIDENCE, 1);
    // Without capture-level evidence only the window SQI counts.
    expect(pulseEvidence(60, 0.3).score).toBe(pulseEvidence(60, 0.3).zSqi);
  });

  it('rises with either kind of evidence', () => {
    let last = -Infinity;
    for (let share = 0.2; share <= 0.5; share += 0.02) {
      const s = pulseEvidence(60, 0.15, share).score;
      expect(s).toBeGreaterThanOrEqual(last);
      last = s;
    }
    last = -Infinity;
    for (let sqi = 0; sqi <= 0.6; sqi += 0.05) {
      const s = pulseEvidence(60, sqi, 0.28).score;
      expect(s).toBeGreaterThanOrEqual(last);
      last = s;
    }
  });
});

describe('the publication decision', () => {
  it('publishes a capture whose windows are noisy when they agree on one rate', () => {
    const lowSqi = new Array(59).fill(0.05);
    expect(assessQuality(lowSqi, 0.9, 68).usable).toBe(false);
    expect(assessQuality(lowSqi, 0.9, 68, { anchorShare: 0.24 }).usable).toBe(false);
    const q = assessQuality(lowSqi, 0.9, 68, { anchorShare: 0.4 });
    expect(q.usable).toBe(true);
    expect(q.level).toBe('fair');
    expect(q.confidence).toBeGreaterThan(0.8);
    // The same share on a 20 s capture is within what pulse-less 20 s captures reach.
    expect(assessQuality(new Array(11).fill(0.05), 0.9, 20, { anchorShare: 0.4 }).usable).toBe(false);
  });

  it('tests the stronger of the two kinds of evidence', () => {
    for (const [sqi, share] of [
      [0.1, 0.3],
      [0.4, 0.25],
      [0.2, 0.4],
    ]) {
      const e = pulseEvidence(60, sqi, share);
      expect(e.score).toBe(Math.max(e.zSqi, e.zShare));
    }
    // Weak evidence of both kinds does not add up to a publication.
    const e = pulseEvidence(60, 0.25, 0.3);
    expect(e.score).toBeLessThan(PUBLISH_EVIDENCE);
    expect(assessQuality(new Array(51).fill(0.25), 0.9, 60, { anchorShare: 0.3 }).usable).toBe(false);
  });

  it('never publishes pulse-less phantom captures', () => {
    let seed = 400;
    for (const durationSec of [20, 45, 90]) {
      for (const o of [
        { pulseAmplitude: 0, noiseStd: 2 },
        { pulseAmplitude: 0, noiseStd: 6, illuminationDrift: 0.05, motionPx: 1 },
        { pureNoise: true },
      ]) {
        const m = estimateOffline(generatePhantom({ durationSec, ...o, seed: seed++ }).packets);
        expect(m.quality.usable).toBe(false);
        expect(m.quality.level).toBe('poor');
        expect(m.cardiac.heartRate).toBeNull();
      }
    }
  });

  it('publishes a clear pulse with a high confidence', () => {
    const { packets, truth } = generatePhantom({ durationSec: 30, heartRateBpm: 84, pulseAmplitude: 0.006, seed: 77 });
    const m = estimateOffline(packets);
    expect(m.quality.usable).toBe(true);
    expect(Math.abs(m.cardiac.heartRate!.value - truth.heartRateBpm)).toBeLessThan(3);
    expect(m.cardiac.heartRate!.confidence).toBeGreaterThanOrEqual(heartRateConfidence(PUBLISH_EVIDENCE));
  });
});

describe('heart-rate confidence', () => {
  it('is monotone in the evidence, bounded, and about 0.86 at the threshold', () => {
    let last = 0;
    for (let s = -2; s <= 20; s += 0.25) {
      const c = heartRateConfidence(s);
      expect(c).toBeGreaterThanOrEqual(last);
      expect(c).toBeLessThanOrEqual(HR_CONFIDENCE_MAX);
      last = c;
    }
    expect(heartRateConfidence(PUBLISH_EVIDENCE)).toBeGreaterThan(0.84);
    expect(heartRateConfidence(PUBLISH_EVIDENCE)).toBeLessThan(0.88);
    expect(heartRateConfidence(NaN)).toBe(0);
  });
});

describe('capture-level agreement (anchorShare)', () => {
  it('measures how much of the averaged spectrum sits at one rate', () => {
    const fs = 30;
    const n = 60 * fs;
    const tone = Float64Array.from({ length: n }, (_, i) => Math.sin((2 * Math.PI * 1.2 * i) / fs));
    let s = 12345;
    const noise = Float64Array.from({ length: n }, () => {
      s = (s * 1103515245 + 12345) % 2147483648;
      return s / 2147483648 - 0.5;
    });
    const pure = captureHeartRate(tone, fs);
    expect(pure.anchorShare).toBeGreaterThan(0.9);
    expect(pure.anchorBpm).toBeCloseTo(72, 0);
    const white = captureHeartRate(noise, fs);
    expect(white.anchorShare).toBeLessThan(0.3);
  });
});
