/** Names of the baseline/assessment metric keys (spec "Baseline" metrics) and quality tones. */
import type { Tone } from '../components/ui.js';

export const METRIC_WORDS: Record<string, string> = {
  heartRateBpm: 'Heart rate',
  rmssdMs: 'HRV RMSSD',
  sdnnMs: 'HRV SDNN',
  breathingRate: 'Breathing rate',
  stressIndex: 'Stress index',
  systolicMmHg: 'Systolic pressure (beta)',
  diastolicMmHg: 'Diastolic pressure (beta)',
  spo2Pct: 'SpO2 (beta)',
};

export const qualityTone = (level: string | undefined): Tone =>
  level === 'good' ? 'good' : level === 'fair' ? 'warn' : level === 'poor' ? 'bad' : 'neutral';

export const POSITION_WORDS: Record<string, string> = { below: 'Below', within: 'Within', above: 'Above' };
