// Capture quality from the per-window signal-quality index (de Haan & Jeanne, TBME 2013, SNR
// after the estimated rate: share of power at the rate and its harmonic), the share of windows
// above the streaming threshold (spec, Streaming events: `hr` only while SQI > 0.38) and how much
// of the crop looked like skin. Rule (docs/engine.md): score = 0.5·s1 + 0.35·s2 + 0.15·s3 with
// s1 = (median SQI − 0.2)/0.4, s2 = share of windows with SQI > 0.38, s3 = (median skin share −
// 0.1)/0.3, each clipped to 0..1; good ≥ 0.65, fair ≥ 0.4, else poor; under 10 s is poor.
// Calibration: a capture is published (fair at least) exactly when its median SQI passes a null
// test against pulse-less captures of the same length (minPublishSqi), so the level is not poor
// for a weak but real pulse on a long capture and never fair for a short capture of noise.
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

/** Analysis window and step of the per-window SQI (track-heart-rate.ts: 10 s windows). */
const WINDOW_SEC = 10;
/**
 * Upper tail of the window SQI when there is no pulse, P(sqi > t): measured on the engine itself
 * (660 windows, one per 5 s, of 60 pulse-less phantom captures: face without pulse at four noise
 * levels and pure noise; quantiles p75 0.17, p90 0.30, p95 0.39, p99 0.51), fitted above p75 by
 * an exponential tail 0.25·exp(−8.5·(t − 0.17)).
 */
function nullWindowTail(t: number): number {
  if (t <= 0.17) return Math.min(1, 0.25 + (0.17 - t) * 4.4); // ≈ linear to p50 at 0.04 (not used near the threshold)
  return 0.25 * Math.exp(-8.5 * (t - 0.17));
}

/** P(at least k of m independent windows exceed a level each exceeds with probability p). */
function binomialTail(m: number, k: number, p: number): number {
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  const lp = Math.log(p);
  const lq = Math.log1p(-p);
  let logC = 0; // log C(m, j), built up from j = 0
  let sum = 0;
  for (let j = 0; j <= m; j++) {
    if (j > 0) logC += Math.log((m - j + 1) / j);
    if (j >= k) sum += Math.exp(logC + j * lp + (m - j) * lq);
  }
  return Math.min(1, sum);
}

/** Accepted chance that a pulse-less capture is published. */
const NULL_FALSE_PUBLISH = 1e-3;

/**
 * Smallest median window SQI a capture needs before anything is published: the level a pulse-less
 * capture's median exceeds with probability 0.1 %. Windows 10 s long overlapping by more than half
 * are counted as one independent window per 5 s (M); the median exceeds t when more than half of
 * them do (binomial tail with the null window tail above). 60 s: 0.25; 30 s: 0.37; 20 s: 0.48;
 * 15 s: 0.65; 10 s: 0.82. Checked on pulse-less phantom captures (docs/accuracy.md, gate calibration).
 */
export function minPublishSqi(durationSec: number): number {
  const m = Math.max(1, Math.min(401, (durationSec - WINDOW_SEC) / (WINDOW_SEC / 2) + 1));
  // Exact for an odd number of windows (the median is one of them); linear in between, so the
  // threshold falls monotonically with the capture's length.
  const lo = 2 * Math.floor((m - 1) / 2) + 1;
  const tLo = thresholdForOdd(lo);
  if (m <= lo) return tLo;
  const tHi = thresholdForOdd(lo + 2);
  return tLo + ((m - lo) / 2) * (tHi - tLo);
}

function thresholdForOdd(m: number): number {
  const k = (m + 1) / 2;
  let lo = 0;
  let hi = 1;
  for (let it = 0; it < 40; it++) {
    const mid = 0.5 * (lo + hi);
    if (binomialTail(m, k, nullWindowTail(mid)) > NULL_FALSE_PUBLISH) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Shortest capture the capture-level evidence test (minAnchorShare) is applied to, s. */
export const ANCHOR_EVIDENCE_MIN_SEC = 45;
/** The test's floor: real-video nulls do not average towards a flat spectrum as phantom noise does. */
const ANCHOR_SHARE_FLOOR = 0.3;

/**
 * Smallest `anchorShare` (rate/capture-rate.ts: the share of the capture-averaged spectrum within
 * ±0.1 Hz of its peak) that counts as a pulse: the windows agree on one rate more than pulse-less
 * captures of the same length do. Calibrated on pulse-less phantom captures (100 per length: a face
 * without pulse at four noise levels with drift and motion, and pure noise) and on real video (the
 * background pixels of the 16 ubfc2 recordings analysed as if they were the face). An exponential
 * tail fitted above the 75th percentile puts the 0.1 % level at 0.39 for 45 s, 0.35 for 60 s and
 * 0.30 for 90 s, which 0.084 + 2.06/√d follows; the floor 0.3 holds on longer captures, where
 * phantom noise keeps averaging out but real video (codec pumping, lighting) does not. Shorter than
 * 45 s the tail is too heavy (20–30 s nulls reach 0.45–0.51) for the test to add anything, so it is
 * not applied: Infinity. docs/accuracy.md (gate calibration) re-checks it on every evaluation.
 */
export function minAnchorShare(durationSec: number): number {
  if (!(durationSec >= ANCHOR_EVIDENCE_MIN_SEC)) return Infinity;
  return Math.max(ANCHOR_SHARE_FLOOR, 0.084 + 2.06 / Math.sqrt(durationSec));
}

/**
 * `captureEvidence`: the capture-level test (minAnchorShare), a second way to show that a pulse is
 * there when the per-window SQI is too low for its own test (low-bitrate video: the pulse is below
 * the noise in single 10 s windows, yet at one rate across the capture).
 */
export function assessQuality(
  windowSqi: ArrayLike<number>,
  medianSkinFraction: number,
  durationSec: number,
  captureEvidence?: { anchorShare: number },
): QualityAssessment {
  const n = windowSqi.length;
  if (n === 0 || durationSec < MIN_DURATION_SEC) return { level: 'poor', score: 0, usable: false };
  const sorted = Float64Array.from(windowSqi as ArrayLike<number>).sort();
  const med = sorted[n >> 1];
  // The null tests decide whether a pulse is there at all; the score then grades it.
  const pulsePresent =
    med >= minPublishSqi(durationSec) ||
    (captureEvidence !== undefined && captureEvidence.anchorShare >= minAnchorShare(durationSec));
  let above = 0;
  for (let i = 0; i < n; i++) if (windowSqi[i] > HR_EVENT_MIN_SQI) above++;
  const s1 = clip01((med - 0.2) / 0.4);
  const s2 = above / n;
  const s3 = clip01((medianSkinFraction - 0.1) / 0.3);
  const raw = clip01(0.5 * s1 + 0.35 * s2 + 0.15 * s3);
  if (!pulsePresent) return { level: 'poor', score: Math.min(raw, QUALITY_FAIR - 0.01), usable: false };
  const score = Math.max(raw, QUALITY_FAIR);
  const level: QualityLevel = score >= QUALITY_GOOD ? 'good' : 'fair';
  return { level, score, usable: true };
}
