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

/** Short names of the quality reason codes (docs/engine.md "Quality reasons"); unknown codes show as sent. */
export const REASON_WORDS: Record<string, string> = {
  face_lost: 'Face lost',
  motion: 'Motion',
  low_light: 'Low light',
  overexposed: 'Overexposed',
  flicker: 'Flickering light',
  low_frame_rate: 'Low frame rate',
  compression: 'Heavy compression',
  too_short: 'Too short',
  no_pulse: 'No pulse found',
  hrv_withheld: 'HRV and stress withheld',
};

export const POSITION_WORDS: Record<string, string> = { below: 'Below', within: 'Within', above: 'Above' };
