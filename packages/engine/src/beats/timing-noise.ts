// How much of the beat-to-beat variation is the beat detector's own timing noise. Each beat is
// timed twice: at its peak (peaks.ts) and by a matched filter, the lag that best aligns the
// capture's average beat with the signal around that peak (ensemble-average beat templates
// correlated per beat, as in Li & Clifford, "Dynamic time warping and machine learning for signal
// quality assessment of pulsatile signals", Physiological Measurement 33(9), 2012). The matched
// filter uses the whole beat, so noise moves it less than the peak; the two disagree by about the
// peak's timing noise. The spread (SD) of the difference between the two timings' intervals, over
// the accepted intervals, is the estimate: an RMSSD made of noise alone is a few times it.
//
// Calibration (docs/engine.md, step 8 and "HRV from video"): on phantom captures with known beats and on
// the ten labelled ubfc2 recordings against their contact PPG, the noise part of the measured RMSSD
// (√(measured² − true²)) was 1.5–6 times this SD (ubfc2 1.9–3.2). HRV is published only while
// 3 × SD ≤ 0.30 × RMSSD (TIMING_NOISE_MAX_SHARE) and the capture is sampled at ≥ 28 Hz (hrv-rule.ts
// `hrvPublishable`). Both were chosen on calibration phantom seeds (scripts/eval/hrv-bar.ts,
// `calibratedRule`: 15–60 fps, pulse 1–4 %, H.264 at 150–2000 kbit/s, a spread of rhythms) as the
// pair, with a floor that admits 30 fps webcams, that publishes the most captures with none outside
// max(10 ms, 20 %) of the truth; fresh validation seeds judge it (docs/accuracy.md, "What camera
// HRV needs"). The SD is itself a noisy estimate, so the rule is conservative and withholds many
// accurate values. It sees noise, not a bias that moves both timings alike (codec distortion; a
// chance background fit removed from the pulse, which beats no longer see: pulse/background-
// reference.ts beatTimingPulse).

/** Half-width of the template, as a share of the beat period. */
const TEMPLATE_HALF = 0.35;
/** How far (share of the period) around the peak the matched filter may move a beat. */
const SEARCH = 0.2;
/** Noise RMSSD per unit of the timing-difference SD (see the calibration above). */
export const TIMING_NOISE_RMSSD_FACTOR = 3;
/** Largest share of the measured RMSSD the estimated noise RMSSD may reach for HRV to be published. */
export const TIMING_NOISE_MAX_SHARE = 0.3;

/** Beat times by matched filter: one per peak, seconds, same order. */
export function templateBeatTimes(
  sig: ArrayLike<number>,
  sampleRateHz: number,
  hrHz: number,
  peakSec: ArrayLike<number>,
): Float64Array {
  const n = sig.length;
  const half = Math.max(2, Math.round((TEMPLATE_HALF * sampleRateHz) / hrHz));
  const search = Math.max(1, Math.round((SEARCH * sampleRateHz) / hrHz));
  const centre = Array.from(peakSec, (p) => Math.round(p * sampleRateHz));
  const tpl = new Float64Array(2 * half + 1);
  let used = 0;
  for (const i of centre) {
    if (i - half < 0 || i + half >= n) continue;
    for (let k = -half; k <= half; k++) tpl[k + half] += sig[i + k];
    used++;
  }
  let mean = 0;
  for (let k = 0; k < tpl.length; k++) mean += tpl[k];
  mean /= tpl.length;
  for (let k = 0; k < tpl.length; k++) tpl[k] = (tpl[k] - mean) / Math.max(1, used);
  const out = new Float64Array(centre.length);
  const cc = new Float64Array(2 * search + 1);
  for (let q = 0; q < centre.length; q++) {
    const i = centre[q];
    let best = 0;
    for (let l = -search; l <= search; l++) {
      let s = 0;
      for (let k = -half; k <= half; k++) {
        const j = i + l + k;
        if (j >= 0 && j < n) s += tpl[k + half] * sig[j];
      }
      cc[l + search] = s;
      if (s > cc[best]) best = l + search;
    }
    let delta = 0;
    if (best > 0 && best < cc.length - 1) {
      const a = cc[best - 1];
      const b = cc[best];
      const c = cc[best + 1];
      const den = a - 2 * b + c;
      if (den < 0) delta = Math.max(-0.5, Math.min(0.5, (0.5 * (a - c)) / den));
    }
    out[q] = (i + best - search + delta) / sampleRateHz;
  }
  return out;
}

/**
 * SD (ms) of the difference between peak-timed and matched-filter-timed intervals over the accepted
 * intervals (`accepted[i]`: the interval from beat i to i + 1); NaN with fewer than 3 of them.
 */
export function timingNoiseMs(
  sig: ArrayLike<number>,
  sampleRateHz: number,
  hrHz: number,
  peakSec: ArrayLike<number>,
  accepted: ArrayLike<number>,
): number {
  const tt = templateBeatTimes(sig, sampleRateHz, hrHz, peakSec);
  const d: number[] = [];
  for (let i = 0; i + 1 < tt.length; i++) {
    if (!accepted[i]) continue;
    d.push((peakSec[i + 1] - peakSec[i] - (tt[i + 1] - tt[i])) * 1000);
  }
  if (d.length < 3) return NaN;
  let m = 0;
  for (const v of d) m += v;
  m /= d.length;
  let s = 0;
  for (const v of d) s += (v - m) ** 2;
  return Math.sqrt(s / d.length);
}

/** Whether an RMSSD is mostly signal: the noise RMSSD estimated from `noiseMs` is at most 0.30 of it. */
export function hrvAboveTimingNoise(rmssdMs: number, noiseMs: number): boolean {
  return Number.isFinite(noiseMs) && TIMING_NOISE_RMSSD_FACTOR * noiseMs <= TIMING_NOISE_MAX_SHARE * rmssdMs;
}
