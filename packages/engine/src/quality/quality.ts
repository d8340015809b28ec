// Capture quality from the per-window signal-quality index (de Haan & Jeanne, TBME 2013, SNR
// after the estimated rate: share of power at the rate and its harmonic), the share of windows
// above the streaming threshold (spec, Streaming events: `hr` only while SQI > 0.38) and how much
// of the crop looked like skin. Rule (docs/engine.md): score = 0.5·s1 + 0.35·s2 + 0.15·s3 with
// s1 = (median SQI − 0.2)/0.4, s2 = share of windows with SQI > 0.38, s3 = (median skin share −
// 0.1)/0.3, each clipped to 0..1; good ≥ 0.65, fair ≥ 0.4, else poor; under 10 s is poor.
// Publishing is a calibrated decision (pulseEvidence, PUBLISH_EVIDENCE): one evidence statistic
// from the median window SQI and the capture-level agreement (anchorShare), each standardised
// against pulse-less captures of the same length, tested at a 0.1 % false-publication level fitted
// on pulse-less captures; a published heart rate carries a confidence mapped from the same
// statistic (heartRateConfidence). Not poor for a weak but real pulse on a long capture, never
// fair for a short capture of noise.
import { HR_EVENT_MIN_SQI } from '@vitals/protocol';

export type QualityLevel = 'good' | 'fair' | 'poor';

export const QUALITY_GOOD = 0.65;
export const QUALITY_FAIR = 0.4;
export const MIN_DURATION_SEC = 10;

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

/**
 * The one-sided normal tail beyond PUBLISH_EVIDENCE: the window-SQI evidence alone publishes when
 * its p-value is at most this (3.2e-5; Abramowitz & Stegun 26.2.17, error < 7.5e-8).
 */
const NULL_FALSE_PUBLISH = ((x: number): number => {
  const t = 1 / (1 + 0.2316419 * x);
  const poly = t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  return (Math.exp((-x * x) / 2) / Math.sqrt(2 * Math.PI)) * poly;
})(4);

/**
 * Smallest median window SQI that publishes on its own (without capture-level evidence): the level
 * where the window-SQI evidence reaches PUBLISH_EVIDENCE. Windows 10 s long overlapping by more than half
 * are counted as one independent window per 5 s (M); the median exceeds t when more than half of
 * them do (binomial tail with the null window tail above). 60 s: 0.37; 30 s: 0.59; 20 s: 0.81;
 * shorter captures need more than a median SQI can give alone (the combination helps them).
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

/**
 * Null model of `anchorShare` (rate/capture-rate.ts: the share of the capture-averaged spectrum
 * within ±0.1 Hz of its peak) for a capture of d seconds without a pulse: mean 0.208 + 1.86/d, SD
 * 0.022 + 21/d². Fitted on real video without a pulse (the background pixels of the 16 ubfc2
 * recordings through the media path, analysed as if they were the face: 20 s mean 0.301 SD 0.076,
 * 60 s 0.239 / 0.026, whole clips 0.235 / 0.024), which sits above the phantom's pulse-less captures
 * at every length (60 s 0.191 / 0.028), so the model is the more conservative of the two.
 */
function shareNull(durationSec: number): { mean: number; sd: number } {
  const d = Math.max(durationSec, MIN_DURATION_SEC);
  return { mean: 0.208 + 1.86 / d, sd: 0.022 + 21 / (d * d) };
}

/** Standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9). */
function normalQuantile(p: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const q0 = Math.min(Math.max(p, 1e-300), 1 - 1e-16);
  const tail = (q: number): number => {
    const t = Math.sqrt(-2 * Math.log(q));
    return (
      (((((c[0] * t + c[1]) * t + c[2]) * t + c[3]) * t + c[4]) * t + c[5]) /
      ((((d[0] * t + d[1]) * t + d[2]) * t + d[3]) * t + 1)
    );
  };
  if (q0 < 0.02425) return tail(q0);
  if (q0 > 1 - 0.02425) return -tail(1 - q0);
  const q = q0 - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

/** Chance that a pulse-less capture of this length has a median window SQI of at least `medianSqi`. */
export function medianSqiNullP(durationSec: number, medianSqi: number): number {
  const m = Math.max(1, Math.min(401, (durationSec - WINDOW_SEC) / (WINDOW_SEC / 2) + 1));
  const lo = 2 * Math.floor((m - 1) / 2) + 1;
  const pOdd = (k: number): number => binomialTail(k, (k + 1) / 2, nullWindowTail(medianSqi));
  const pLo = pOdd(lo);
  if (m <= lo) return pLo;
  // Geometric interpolation between the two odd window counts around m (as minPublishSqi does linearly).
  const w = (m - lo) / 2;
  return Math.exp(Math.log(Math.max(pLo, 1e-300)) * (1 - w) + Math.log(Math.max(pOdd(lo + 2), 1e-300)) * w);
}

export interface PulseEvidence {
  /** Window-SQI evidence: the median SQI's null p-value as a standard normal deviate. */
  zSqi: number;
  /** Capture-level evidence: (anchorShare − null mean) / null SD; −Infinity when not measured. */
  zShare: number;
  /** The statistic the gate tests: max(zSqi, zShare). */
  score: number;
}

/**
 * One statistic for the evidence that a pulse is there: the stronger of the window-SQI evidence and
 * the capture-level agreement evidence (a union–intersection test), each standardised against
 * pulse-less captures of the same length, so one threshold serves every length. Their Stouffer
 * combination was tried as a third part and dropped: on the calibration captures it raised the
 * nulls' tail (backgrounds with a little of both) more than it lifted real pulses.
 */
export function pulseEvidence(durationSec: number, medianSqi: number, anchorShare?: number): PulseEvidence {
  // −Φ⁻¹(p) rather than Φ⁻¹(1 − p): exact for the tiny p of a clear pulse.
  const zSqi = Math.max(-8, Math.min(8, -normalQuantile(medianSqiNullP(durationSec, medianSqi))));
  if (anchorShare === undefined || !Number.isFinite(anchorShare)) return { zSqi, zShare: -Infinity, score: zSqi };
  const n = shareNull(durationSec);
  const zShare = (anchorShare - n.mean) / n.sd;
  return { zSqi, zShare, score: Math.max(zSqi, zShare) };
}

/**
 * The gate: a capture is published when its evidence score reaches this. The 0.1 % level of the
 * score over pulse-less captures: an exponential tail fitted above the 90th percentile of 454
 * pulse-less captures of 20–90 s (phantom faces without pulse and pure noise, 150; the ubfc2
 * backgrounds through the media path and through the first-frame box, 276; the 28 skin patches,
 * whose pulse no test finds) puts it at 4.0 (observed maximum 3.11). An extrapolation: a fit above
 * the 75th percentile says 5.0, above the 95th 3.4. docs/accuracy.md re-checks it on fresh nulls.
 */
export const PUBLISH_EVIDENCE = 4;

/**
 * Heart-rate confidence: the chance that the published rate is within 5 bpm of the truth, from the
 * evidence score, 1/(1 + e^−(0.3 + 0.38·score)), at most 0.95 (0.86 at the threshold). Logistic fit
 * on the labelled ubfc2 recordings (whole clips and 20–60 s parts, media path and first-frame box;
 * 124 captures); docs/accuracy.md shows the reliability on those, on fresh phantom captures, and
 * with the fit leaving one subject out. Capped because ~100 captures cannot show more than ~0.95.
 */
export function heartRateConfidence(score: number): number {
  if (!Number.isFinite(score)) return 0;
  return Math.min(HR_CONFIDENCE_MAX, 1 / (1 + Math.exp(-(HR_CONFIDENCE_A + HR_CONFIDENCE_B * score))));
}
export const HR_CONFIDENCE_A = 0.3;
export const HR_CONFIDENCE_B = 0.38;
export const HR_CONFIDENCE_MAX = 0.95;

export interface QualityAssessment {
  level: QualityLevel;
  score: number;
  usable: boolean;
  /** The evidence the decision weighed (pulseEvidence); null when nothing was measured. */
  evidence: PulseEvidence | null;
  /** Heart-rate confidence (heartRateConfidence), 0 when not usable. */
  confidence: number;
}

/**
 * The evidence the publication decision tests (pulseEvidence of the median window SQI and the
 * capture-level agreement); null when there is nothing to test (no window, or a capture shorter than
 * MIN_DURATION_SEC). The live `hr` events (estimators/streaming.ts) take the same decision on the
 * capture so far.
 */
export function publicationEvidence(
  windowSqi: ArrayLike<number>,
  durationSec: number,
  captureEvidence?: { anchorShare: number },
): PulseEvidence | null {
  const n = windowSqi.length;
  if (n === 0 || durationSec < MIN_DURATION_SEC) return null;
  const med = Float64Array.from(windowSqi).sort()[n >> 1];
  return pulseEvidence(durationSec, med, captureEvidence?.anchorShare);
}

/** The publication decision: the evidence for a pulse reaches PUBLISH_EVIDENCE. */
export function publishes(evidence: PulseEvidence | null): evidence is PulseEvidence {
  return evidence !== null && evidence.score >= PUBLISH_EVIDENCE;
}

/**
 * `captureEvidence.anchorShare`: the capture-level evidence (rate/capture-rate.ts), which shows a
 * pulse when single 10 s windows are too noisy for the window SQI (low-bitrate video: the pulse is
 * below the noise in each window, yet at one rate across the capture).
 */
export function assessQuality(
  windowSqi: ArrayLike<number>,
  medianSkinFraction: number,
  durationSec: number,
  captureEvidence?: { anchorShare: number },
): QualityAssessment {
  // The evidence decides whether a pulse is there at all; the score then grades it.
  const evidence = publicationEvidence(windowSqi, durationSec, captureEvidence);
  if (evidence === null) return { level: 'poor', score: 0, usable: false, evidence: null, confidence: 0 };
  const n = windowSqi.length;
  const med = Float64Array.from(windowSqi).sort()[n >> 1];
  let above = 0;
  for (let i = 0; i < n; i++) if (windowSqi[i] > HR_EVENT_MIN_SQI) above++;
  const s1 = clip01((med - 0.2) / 0.4);
  const s2 = above / n;
  const s3 = clip01((medianSkinFraction - 0.1) / 0.3);
  const raw = clip01(0.5 * s1 + 0.35 * s2 + 0.15 * s3);
  if (!publishes(evidence))
    return { level: 'poor', score: Math.min(raw, QUALITY_FAIR - 0.01), usable: false, evidence, confidence: 0 };
  const score = Math.max(raw, QUALITY_FAIR);
  const level: QualityLevel = score >= QUALITY_GOOD ? 'good' : 'fair';
  return { level, score, usable: true, evidence, confidence: heartRateConfidence(evidence.score) };
}
