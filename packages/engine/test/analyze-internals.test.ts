// analyzeTraceWithInternals (the evaluation's view of the chain's beat-level HRV): the same
// measurement as analyzeTrace, and the internal HRV is the one published when the gate lets it out.
import { describe, expect, it } from 'vitest';
import { analyzeTrace, buildRgbTrace, generatePhantom } from '@vitals/engine';
import { analyzeTraceWithInternals, captureTiming, composeMeasurement } from '../src/estimators/analyze.js';
import { roundTo } from '../src/dsp/stats.js';

describe('analyzeTraceWithInternals', () => {
  it('returns the measurement analyzeTrace returns, and the HRV behind the published block', () => {
    const { packets } = generatePhantom({
      durationSec: 40,
      heartRateBpm: 72,
      pulseAmplitude: 0.03,
      noiseStd: 1,
      rsaMs: 90,
      seed: 23,
    });
    const trace = buildRgbTrace(packets);
    const { measurement, vitals } = analyzeTraceWithInternals(trace);
    expect(measurement).toEqual(analyzeTrace(trace));
    expect(measurement.hrv).not.toBeNull();
    expect(vitals?.hrv).not.toBeNull();
    expect(roundTo(vitals!.hrv!.sdnnMs, 1)).toBe(measurement.hrv!.sdnnMs);
    expect(roundTo(vitals!.hrv!.rmssdMs, 1)).toBe(measurement.hrv!.rmssdMs);
    expect(Array.from(vitals!.rr.nnMs, (v) => roundTo(v, 1))).toEqual(measurement.raw.rrIntervalsMs);
  });

  it.each([
    { label: 'a 15 s capture (HRV needs 20 s)', opts: { durationSec: 15 } },
    { label: 'a capture the quality gate calls poor', opts: { durationSec: 40, pulseAmplitude: 0.002, noiseStd: 6 } },
  ])('still gives the internal HRV for $label, where none is published', ({ opts }) => {
    const { packets } = generatePhantom({ heartRateBpm: 80, seed: 22, ...opts });
    const trace = buildRgbTrace(packets);
    const { measurement, vitals } = analyzeTraceWithInternals(trace);
    expect(measurement).toEqual(analyzeTrace(trace));
    expect(measurement.hrv).toBeNull();
    expect(vitals?.hrv?.nnCount).toBeGreaterThanOrEqual(15);
  });
});

describe('HRV publication', () => {
  // The same beats and intervals composed under a good and under a fair verdict: only a good
  // capture publishes HRV and the stress index (analyze.ts, HRV_MIN_LEVEL); the rate is published in both.
  it('is for good captures only', () => {
    const { packets } = generatePhantom({
      durationSec: 40,
      heartRateBpm: 72,
      pulseAmplitude: 0.03,
      noiseStd: 1,
      rsaMs: 90,
      seed: 23,
    });
    const trace = buildRgbTrace(packets);
    const { measurement, vitals } = analyzeTraceWithInternals(trace);
    expect(measurement.quality.level).toBe('good');
    expect(measurement.hrv).not.toBeNull();
    const timing = captureTiming(trace.tMicros, trace.n);
    const compose = (level: 'good' | 'fair', score: number) =>
      composeMeasurement({
        timing,
        quality: { level, score, usable: true, evidence: null, confidence: 0.9 },
        hrBpm: measurement.cardiac.heartRate!.value,
        vitals,
        pulse: Float64Array.from(measurement.raw.ppgSignal),
        bp: null,
        spo2: null,
        stats: measurement.stats,
      });
    const good = compose('good', 0.7);
    expect(good.hrv).toEqual(
      expect.objectContaining({ sdnnMs: measurement.hrv!.sdnnMs, rmssdMs: measurement.hrv!.rmssdMs }),
    );
    expect(good.stress).not.toBeNull();
    const fair = compose('fair', 0.6);
    expect(fair.cardiac.heartRate).not.toBeNull();
    expect(fair.hrv).toBeNull();
    expect(fair.stress).toBeNull();
  });
});
