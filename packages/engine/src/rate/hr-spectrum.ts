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
/** Share of the power at a candidate's double credited to it (capped at its own power). */
export const HARMONIC_CREDIT = 0.5;
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
  /** The background reference's spectrum over the same samples, when there is one. */
  noiseSpectrum: Spectrum | null;
  /** Method weights used for `score` (each method's own SQI at its own peak). */
  weights: number[];
  band: HrBand;
  /** Window length, s (for the SQI's chance level). */
  windowSec: number;
}

/** Hann window equivalent noise bandwidth, in bins of 1/T: the width of one independent spectral cell. */
const HANN_ENBW = 1.5;

/**
 * The analysis band a sampling rate can actually observe: the band-pass stops at 0.45·fs
 * (pulse-signals.ts), so above that there is no signal, only the filter's skirt.
 */
export function observableBand(band: HrBand, sampleRateHz: number): HrBand {
  return { lowHz: band.lowHz, highHz: Math.min(band.highHz, 0.45 * sampleRateHz) };
}

/**
 * True when the sampling rate resolves the whole heart-rate band. Below it (fs < 2.2 × the band's
 * top, 5.6 Hz for the rest band) a pulse above 0.45·fs is filtered out or aliases onto a lower
 * rate, so no rate can be trusted and the chain reports poor quality instead of a number.
 */
export function bandObservable(band: HrBand, sampleRateHz: number): boolean {
  return Number.isFinite(sampleRateHz) && 0.45 * sampleRateHz >= band.highHz;
}

/**
 * Share of in-band power a pulse-less (white) spectrum puts within ±0.12 Hz of its own tallest
 * peak: with K = B·T/1.5 independent cells in a band of width B Hz over a T s Hann window, the
 * tallest cell holds about H_K (the K-th harmonic number) times the mean cell and its neighbours
 * within ±0.12 Hz about one more each. Monte Carlo (white noise, band-passed, 0.7–2.5 Hz, 10 s):
 * median 0.35, this formula 0.31; the old fixed 1.6·0.24/B = 0.21 ignored the window and the
 * Hann main lobe, so noise scored a median SQI of 0.17 and crossed the 0.38 event threshold in
 * about 8 % of windows.
 */
export function chanceShare(bandWidthHz: number, windowSec: number): number {
  const cells = Math.max(1, (bandWidthHz * windowSec) / HANN_ENBW);
  let h = 0;
  for (let k = 1; k <= Math.round(cells); k++) h += 1 / k;
  const near = Math.max(0, (2 * SQI_HALF_WIDTH_HZ * windowSec) / HANN_ENBW - 1);
  return Math.min(0.95, (h + near) / cells);
}

/**
 * SQI of spectrum s at rate fHz within the analysis band: the share of in-band power within
 * ±0.12 Hz of f, rescaled so that a pulse-less spectrum (chanceShare over the band the sampling
 * rate can observe and the window's length) maps to ~0 and a pure tone to 1:
 * sqi = (share − b)/(1 − b).
 */
export function sqiAt(s: Spectrum, fHz: number, band: HrBand = HR_BAND, windowSec = 10): number {
  const ob = observableBand(band, s.binHz * s.nfft);
  if (!(ob.highHz > ob.lowHz)) return 0;
  const [lo, hi] = bandBins(s, ob.lowHz, ob.highHz);
  let total = 0;
  for (let k = lo; k <= hi; k++) total += s.power[k];
  if (total <= 0) return 0;
  const share = Math.min(1, powerNear(s, fHz, SQI_HALF_WIDTH_HZ) / total);
  const b = chanceShare(ob.highHz - ob.lowHz, windowSec);
  return Math.max(0, (share - b) / (1 - b));
}

/**
 * Score and spectra for pulses[m][from..to). All pulses share `sampleRateHz`. `reuse`: a window
 * no longer needed (the streaming estimator's previous one) whose arrays are overwritten when
 * their sizes fit, instead of allocating new ones.
 */
export function hrWindow(
  pulses: Float64Array[],
  from: number,
  to: number,
  sampleRateHz: number,
  nfft: number,
  band: HrBand = HR_BAND,
  noise: Float64Array | null = null,
  reuse: HrWindow | null = null,
): HrWindow {
  const spectra = pulses.map((p, m) =>
    powerSpectrum(p, sampleRateHz, nfft, { from, to, into: reuse?.spectra[m]?.power }),
  );
  const ns = noise ? powerSpectrum(noise, sampleRateHz, nfft, { from, to, into: reuse?.noiseSpectrum?.power }) : null;
  return scoreSpectra(spectra, ns, (to - from) / sampleRateHz, band, reuse?.score);
}

/**
 * The window score from spectra already computed (one per pulse method, same nfft), with the
 * background reference's spectrum `noiseSpectrum` for the down-weighting (kept on the window).
 * `scoreInto`: an array of the right length to hold the score instead of a new one.
 */
export function scoreSpectra(
  spectra: Spectrum[],
  noiseSpectrum: Spectrum | null,
  windowSec: number,
  band: HrBand = HR_BAND,
  scoreInto?: Float64Array,
): HrWindow {
  const s0 = spectra[0];
  const [lo, hiBin] = bandBins(s0, band.lowHz, band.highHz);
  // A band the sampling rate cannot represent leaves a single state (rate unknown, SQI 0) rather
  // than an empty or negative range.
  const hi = Math.max(lo, hiBin);
  const states = hi - lo + 1;
  const score = scoreInto && scoreInto.length === states ? scoreInto.fill(0) : new Float64Array(states);
  const weights: number[] = [];
  for (const s of spectra) {
    let total = 0;
    let best = lo;
    for (let k = lo; k <= hi; k++) {
      total += s.power[k];
      if (s.power[k] > s.power[best]) best = k;
    }
    const w = total > 0 ? Math.max(1e-3, sqiAt(s, best * s.binHz, band, windowSec)) : 0;
    weights.push(w);
    if (total <= 0) continue;
    for (let k = lo; k <= hi; k++) {
      const h = 2 * k < s.power.length ? s.power[2 * k] : 0;
      score[k - lo] += (w * (s.power[k] + HARMONIC_CREDIT * Math.min(h, s.power[k]))) / total;
    }
  }
  if (noiseSpectrum) {
    const ns = noiseSpectrum;
    let peak = 0;
    for (let k = lo; k <= hi; k++) peak = Math.max(peak, ns.power[k]);
    if (peak > 0) for (let k = lo; k <= hi; k++) score[k - lo] /= 1 + (BACKGROUND_PENALTY * ns.power[k]) / peak;
  }
  let sum = 0;
  for (let i = 0; i < states; i++) sum += score[i];
  if (sum > 0) for (let i = 0; i < states; i++) score[i] /= sum;
  return { lo, states, binHz: s0.binHz, score, spectra, noiseSpectrum, weights, band, windowSec };
}

/** Refined rate (Hz) near candidate bin k: the local power maximum of the best method, interpolated. */
export function refineRateHz(w: HrWindow, k: number): { freqHz: number; sqi: number; method: number } {
  let bestM = 0;
  let bestSqi = -1;
  let bestF = k * w.binHz;
  for (let m = 0; m < w.spectra.length; m++) {
    const s = w.spectra[m];
    let kk = k;
    for (let j = Math.max(1, k - 2); j <= Math.min(s.power.length - 2, k + 2); j++)
      if (s.power[j] > s.power[kk]) kk = j;
    const f = interpolatePeakBin(s.power, kk) * s.binHz;
    const q = sqiAt(s, f, w.band, w.windowSec);
    if (q > bestSqi) {
      bestSqi = q;
      bestM = m;
      bestF = f;
    }
  }
  return { freqHz: bestF, sqi: Math.max(0, bestSqi), method: bestM };
}
