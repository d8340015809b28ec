import { describe, expect, it } from 'vitest';
import { estimateOffline, generatePhantom } from '@vitals/engine';
import { captureHeartRate } from '../src/rate/capture-rate.js';
import { ANCHOR_EVIDENCE_MIN_SEC, assessQuality, minAnchorShare, minPublishSqi } from '../src/quality/quality.js';

// The gate's second test: a capture whose analysis windows agree on one rate (anchorShare, the
// share of the capture-averaged spectrum near its peak) shows a pulse even when single windows
// are too noisy for the window-SQI test. Calibration and real-video nulls: docs/accuracy.md.

describe('capture-level pulse evidence (minAnchorShare)', () => {
  it('is not applied below 45 s, falls with length, and never goes under its floor', () => {
    expect(minAnchorShare(20)).toBe(Infinity);
    expect(minAnchorShare(ANCHOR_EVIDENCE_MIN_SEC - 0.1)).toBe(Infinity);
    expect(minAnchorShare(NaN)).toBe(Infinity);
    expect(minAnchorShare(45)).toBeCloseTo(0.391, 3);
    expect(minAnchorShare(60)).toBeCloseTo(0.35, 2);
    expect(minAnchorShare(90)).toBeGreaterThanOrEqual(0.3);
    for (let d = 45; d < 600; d += 5) expect(minAnchorShare(d + 5)).toBeLessThanOrEqual(minAnchorShare(d));
    expect(minAnchorShare(3600)).toBe(0.3);
  });

  it('publishes a capture whose windows fail the SQI test when they agree on one rate', () => {
    const lowSqi = new Array(59).fill(0.05);
    expect(0.05).toBeLessThan(minPublishSqi(68));
    expect(assessQuality(lowSqi, 0.9, 68).usable).toBe(false);
    expect(assessQuality(lowSqi, 0.9, 68, { anchorShare: 0.2 }).usable).toBe(false);
    const q = assessQuality(lowSqi, 0.9, 68, { anchorShare: 0.36 });
    expect(q.usable).toBe(true);
    expect(q.level).toBe('fair');
    // Same share, too short for the test: the window SQI alone decides, and it says no.
    expect(assessQuality(new Array(21).fill(0.05), 0.9, 30, { anchorShare: 0.45 }).usable).toBe(false);
  });

  it('still publishes nothing for pulse-less captures of 45 s and longer', () => {
    let seed = 400;
    for (const durationSec of [45, 60, 90]) {
      for (const o of [
        { pulseAmplitude: 0, noiseStd: 2 },
        { pulseAmplitude: 0, noiseStd: 6, illuminationDrift: 0.05, motionPx: 1 },
        { pureNoise: true },
      ]) {
        const m = estimateOffline(generatePhantom({ durationSec, ...o, seed: seed++ }).packets);
        expect(m.quality.usable).toBe(false);
        expect(m.cardiac.heartRate).toBeNull();
        expect(m.stats.anchorShare!).toBeLessThan(minAnchorShare(durationSec));
      }
    }
  });

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
