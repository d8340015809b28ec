// Capture quality from the per-window signal-quality index (de Haan & Jeanne, TBME 2013, SNR
// after the estimated rate: share of power at the rate and its harmonic), the share of windows
// above the streaming threshold (spec, Streaming events: `hr` only while SQI > 0.38) and how much
// of the crop looked like skin. Rule (docs/engine.md): score = 0.5·s1 + 0.35·s2 + 0.15·s3 with
// s1 = (median SQI − 0.2)/0.4, s2 = share of windows with SQI > 0.38, s3 = (median skin share −
// 0.1)/0.3, each clipped to 0..1; good ≥ 0.65, fair ≥ 0.4, else poor; under 10 s is poor.
import { HR_EVENT_MIN_SQI } from '@vitals/protocol';

export type QualityLevel = 'good' | 'fair' | 'poor';

export const QUALITY_GOOD = 0.65;
export const QUALITY_FAIR = 0.4;
export const MIN_DURATION_SEC = 10;

export interface QualityAssessment {
  level: QualityLevel;
  score: number;
  usable: boolean;
}

const clip01 = (v: number): number => (v < 0 ? 0 : v > 1 ? 1 : v);

export function assessQuality(windowSqi: ArrayLike<number>, medianSkinFraction: number, durationSec: number): QualityAssessment {
  const n = windowSqi.length;
  if (n === 0 || durationSec < MIN_DURATION_SEC) return { level: 'poor', score: 0, usable: false };
  const sorted = Float64Array.from(windowSqi as ArrayLike<number>).sort();
  const med = sorted[n >> 1];
  let above = 0;
  for (let i = 0; i < n; i++) if (windowSqi[i] > HR_EVENT_MIN_SQI) above++;
  const s1 = clip01((med - 0.2) / 0.4);
  const s2 = above / n;
  const s3 = clip01((medianSkinFraction - 0.1) / 0.3);
  const score = clip01(0.5 * s1 + 0.35 * s2 + 0.15 * s3);
  const level: QualityLevel = score >= QUALITY_GOOD ? 'good' : score >= QUALITY_FAIR ? 'fair' : 'poor';
  return { level, score, usable: level !== 'poor' };
}
