// Heart rate from one analysis window: per-method periodograms (rPPG-Toolbox
// `calculate_metric_per_video`; pyVHR `BPM.py`, Welch-like sliding windows), a harmonic check
// that credits a candidate with half the power at its double (a sub-harmonic summation in the
// spirit of Hermes, "Measurement of pitch by subharmonic summation", JASA 83(1), 1988), and the
// signal-quality index of de Haan & Jeanne (TBME 2013): the share of power near the rate and its
// first harmonic (credit capped at the candidate's own power, so a sub-harmonic ghost whose
// double is the true rate gains nothing), computed here against the estimated rather than the true rate.
import { bandBins, interpolatePeakBin, powerNear, powerSpectrum, type Spectrum } from '../dsp/spectrum.js';

export interface HrBand {
  lowHz: number;
  highHz: number;
}
export const HR_BAND: HrBand = { lowHz: 0.7, highHz: 2.5 };
/** Half-width around the rate and its harmonic counted as "signal" by the SQI. */
const SQI_HALF_WIDTH_HZ = 0.12;
const HARMONIC_CREDIT = 0.5;
/**
 * How strongly a frequency is down-weighted where the background reference carries power: the
 * score is divided by (1 + K·p_bg/max p_bg) (background-reference.ts).
 */
const BACKGROUND_PENALTY = 4;

export interface HrWindow {
  /** First candidate bin (inclusive) and the number of candidate bins. */
  lo: number;
  states: number;
  binHz: number;
  /** Harmonic-credited, per-method-weighted score per candidate bin, summing to 1. */
  score: Float64Array;
  spectra: Spectrum[];
  /** Method weights used for `score` (each method's own SQI at its own peak). */
  weights: number[];
  band: HrBand;
}

/**
 * SQI of spectrum s at rate fHz within the analysis band: the share of in-band power within
 * ±0.12 Hz of f, rescaled so that white noise (whose tallest peak takes about 1.6× its fair share
 * of the band) maps to ~0 and a pure tone to 1: sqi = (share − b)/(1 − b), b = 1.6·0.24 Hz / band width.
 */
export function sqiAt(s: Spectrum, fHz: number, band: HrBand = HR_BAND): number {
  const [lo, hi] = bandBins(s, band.lowHz, band.highHz);
  let total = 0;
  for (let k = lo; k <= hi; k++) total += s.power[k];
  if (total <= 0) return 0;
  const share = Math.min(1, powerNear(s, fHz, SQI_HALF_WIDTH_HZ) / total);
  const b = Math.min(0.9, (1.6 * 2 * SQI_HALF_WIDTH_HZ) / (band.highHz - band.lowHz));
  return Math.max(0, (share - b) / (1 - b));
}

/** Score and spectra for pulses[m][from..to). All pulses share `sampleRateHz`. */
export function hrWindow(
  pulses: Float64Array[],
  from: number,
  to: number,
  sampleRateHz: number,
  nfft: number,
  band: HrBand = HR_BAND,
  noise: Float64Array | null = null,
): HrWindow {
  const spectra = pulses.map((p) => powerSpectrum(p, sampleRateHz, nfft, { from, to }));
  const s0 = spectra[0];
  const [lo, hi] = bandBins(s0, band.lowHz, band.highHz);
  const states = hi - lo + 1;
  const score = new Float64Array(states);
  const weights: number[] = [];
  for (const s of spectra) {
    let total = 0;
    let best = lo;
    for (let k = lo; k <= hi; k++) {
      total += s.power[k];
      if (s.power[k] > s.power[best]) best = k;
    }
    const w = total > 0 ? Math.max(1e-3, sqiAt(s, best * s.binHz, band)) : 0;
    weights.push(w);
    if (total <= 0) continue;
    for (let k = lo; k <= hi; k++) {
      const h = 2 * k < s.power.length ? s.power[2 * k] : 0;
      score[k - lo] += (w * (s.power[k] + HARMONIC_CREDIT * Math.min(h, s.power[k]))) / total;
    }
  }
  if (noise) {
    const ns = powerSpectrum(noise, sampleRateHz, nfft, { from, to });
    let peak = 0;
    for (let k = lo; k <= hi; k++) peak = Math.max(peak, ns.power[k]);
    if (peak > 0) for (let k = lo; k <= hi; k++) score[k - lo] /= 1 + (BACKGROUND_PENALTY * ns.power[k]) / peak;
  }
  let sum = 0;
  for (let i = 0; i < states; i++) sum += score[i];
  if (sum > 0) for (let i = 0; i < states; i++) score[i] /= sum;
  return { lo, states, binHz: s0.binHz, score, spectra, weights, band };
}

/** Refined rate (Hz) near candidate bin k: the local power maximum of the best method, interpolated. */
export function refineRateHz(w: HrWindow, k: number): { freqHz: number; sqi: number; method: number } {
  let bestM = 0;
  let bestSqi = -1;
  let bestF = k * w.binHz;
  for (let m = 0; m < w.spectra.length; m++) {
    const s = w.spectra[m];
    let kk = k;
    for (let j = Math.max(1, k - 2); j <= Math.min(s.power.length - 2, k + 2); j++) if (s.power[j] > s.power[kk]) kk = j;
    const f = interpolatePeakBin(s.power, kk) * s.binHz;
    const q = sqiAt(s, f, w.band);
    if (q > bestSqi) {
      bestSqi = q;
      bestM = m;
      bestF = f;
    }
  }
  return { freqHz: bestF, sqi: Math.max(0, bestSqi), method: bestM };
}
