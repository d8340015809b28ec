/**
 * Personal baseline (spec: GET /sdk/v1/users/{ref}/baseline; CLARIFICATIONS 12 and 16): per metric
 * the median and the raw (unscaled) median absolute deviation over usable measurements of the last
 * 30 days, at most the 200 most recent; corridor median ± 2·MAD; a metric needs 5 values.
 */
import { BASELINE_MIN_SAMPLES, BASELINE_WINDOW_DAYS, type Baseline, type BaselineMetric } from '@vitals/protocol';
import type { BaselineSourceRow } from '../store/measurements.js';

export const BASELINE_METRICS = [
  ['heartRateBpm', 'heart_rate_bpm', 'bpm'],
  ['rmssdMs', 'rmssd_ms', 'ms'],
  ['sdnnMs', 'sdnn_ms', 'ms'],
  ['breathingRate', 'breathing_rate', 'brpm'],
  ['stressIndex', 'stress_index', 'index'],
  ['systolicMmHg', 'systolic_mmhg', 'mmHg'],
  ['diastolicMmHg', 'diastolic_mmhg', 'mmHg'],
  ['spo2Pct', 'spo2_pct', '%'],
] as const;

export const WELLNESS_DISCLAIMER =
  'Wellness estimates, not medical values. The corridor is informational, derived from your own recent measurements, and is not a medical norm.';

/** The wire shapes come from the protocol's schemas (the route validates its answer against them). */
export type { Baseline, BaselineMetric };

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const round = (v: number): number => Math.round(v * 1000) / 1000;

export function computeBaseline(userRef: string, rows: BaselineSourceRow[]): Baseline {
  const metrics: Record<string, BaselineMetric> = {};
  for (const [name, column, unit] of BASELINE_METRICS) {
    const values = rows.map((r) => r[column]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    if (values.length < BASELINE_MIN_SAMPLES) continue;
    const med = median(values);
    const mad = median(values.map((v) => Math.abs(v - med)));
    metrics[name] = {
      median: round(med),
      mad: round(mad),
      low: round(med - 2 * mad),
      high: round(med + 2 * mad),
      unit,
      samples: values.length,
    };
  }
  const ok = Object.keys(metrics).length > 0;
  return {
    userRef,
    status: ok ? 'ok' : 'insufficient_data',
    windowDays: BASELINE_WINDOW_DAYS,
    minSamples: BASELINE_MIN_SAMPLES,
    sampleCount: rows.length,
    metrics,
    disclaimers: [WELLNESS_DISCLAIMER],
  };
}
