/**
 * The wellness assessment (`include=assessment`; shape not shown in the spec, designed in
 * docs/decisions.md): each metric of the measurement placed against the user's own baseline
 * corridor and against broad population reference ranges, with flags and a plain-language summary.
 */
import type { Measurement } from '@vitals/protocol';
import type { Baseline } from './baseline.js';
import { WELLNESS_DISCLAIMER } from './baseline.js';

export type Position = 'below' | 'within' | 'above';

export interface MetricAssessment {
  metric: string;
  value: number;
  unit: string;
  /** Against the user's own corridor (median ± 2·MAD); absent without a baseline for the metric. */
  personal?: { position: Position; low: number; high: number; median: number };
  /** Against a broad adult resting reference range (informational, not diagnostic). */
  reference: { position: Position; low: number; high: number };
  flags: string[];
}

export interface Assessment {
  version: 1;
  basis: 'baseline' | 'reference_only';
  status: 'assessed' | 'not_assessable';
  metrics: MetricAssessment[];
  flags: string[];
  summary: string;
  disclaimers: string[];
}

/** Adult resting reference ranges (broad, informational). */
const REFERENCE: Record<string, { low: number; high: number; unit: string; label: string }> = {
  heartRateBpm: { low: 50, high: 100, unit: 'bpm', label: 'heart rate' },
  rmssdMs: { low: 15, high: 100, unit: 'ms', label: 'RMSSD' },
  sdnnMs: { low: 20, high: 150, unit: 'ms', label: 'SDNN' },
  breathingRate: { low: 10, high: 22, unit: 'brpm', label: 'breathing rate' },
  stressIndex: { low: 0, high: 300, unit: 'index', label: 'stress index' },
  systolicMmHg: { low: 90, high: 130, unit: 'mmHg', label: 'systolic pressure (beta)' },
  diastolicMmHg: { low: 60, high: 85, unit: 'mmHg', label: 'diastolic pressure (beta)' },
  spo2Pct: { low: 95, high: 100, unit: '%', label: 'SpO2 (beta)' },
};

function valuesOf(m: Measurement): Record<string, number | undefined> {
  return {
    heartRateBpm: m.cardiac?.heartRate?.value,
    rmssdMs: m.hrv?.rmssdMs,
    sdnnMs: m.hrv?.sdnnMs,
    breathingRate: m.respiratory?.breathingRate?.value,
    stressIndex: m.stress?.index,
    systolicMmHg: m.bloodPressure?.systolicMmHg,
    diastolicMmHg: m.bloodPressure?.diastolicMmHg,
    spo2Pct: m.spo2?.value,
  };
}

const place = (v: number, low: number, high: number): Position => (v < low ? 'below' : v > high ? 'above' : 'within');

export function assess(m: Measurement, baseline: Baseline | null): Assessment {
  const disclaimers = [
    WELLNESS_DISCLAIMER,
    'Blood pressure and SpO2 are beta estimates from a camera and must not be used for any medical decision.',
  ];
  if (!m.quality || m.quality.level === 'poor' || m.isComplete === false) {
    return {
      version: 1,
      basis: 'reference_only',
      status: 'not_assessable',
      metrics: [],
      flags: ['insufficient_signal'],
      summary:
        'The signal was not good enough to assess this measurement. Try again in steady, even light, facing the camera.',
      disclaimers,
    };
  }
  const metrics: MetricAssessment[] = [];
  const flags: string[] = [];
  for (const [name, value] of Object.entries(valuesOf(m))) {
    if (typeof value !== 'number') continue;
    const ref = REFERENCE[name];
    const a: MetricAssessment = {
      metric: name,
      value,
      unit: ref.unit,
      reference: { position: place(value, ref.low, ref.high), low: ref.low, high: ref.high },
      flags: [],
    };
    const b = baseline?.metrics[name];
    if (b) {
      a.personal = { position: place(value, b.low, b.high), low: b.low, high: b.high, median: b.median };
      if (a.personal.position !== 'within') a.flags.push(`${a.personal.position}_personal_range`);
    }
    if (a.reference.position !== 'within') a.flags.push(`${a.reference.position}_reference_range`);
    flags.push(...a.flags.map((f) => `${name}:${f}`));
    metrics.push(a);
  }
  if (m.quality.level === 'fair') flags.push('fair_signal_quality');
  const outside = metrics.filter((x) => x.personal && x.personal.position !== 'within');
  const basis = metrics.some((x) => x.personal) ? 'baseline' : 'reference_only';
  let summary: string;
  if (metrics.length === 0) summary = 'No metrics to assess.';
  else if (basis === 'reference_only')
    summary =
      'Not enough history for a personal baseline yet; values are compared with broad adult resting ranges only.';
  else if (outside.length === 0) summary = 'All assessed values are within your usual range.';
  else
    summary = `Outside your usual range: ${outside
      .map((x) => `${REFERENCE[x.metric].label} ${x.personal!.position === 'above' ? 'higher' : 'lower'} than usual`)
      .join(', ')}.`;
  return { version: 1, basis, status: 'assessed', metrics, flags, summary, disclaimers };
}
