// Trace → pulse: POS and CHROM (see pos.ts, chrom.ts), then smoothness-priors detrending
// (Tarvainen et al., TBME 2002; λ = 100 at 30 Hz, scaled with the rate squared so the cut-off
// stays ~0.05 Hz) and a zero-phase Butterworth band-pass (rPPG-Toolbox `post_process.py`).
import { bandPassZeroPhaseInto } from '../dsp/butterworth.js';
import { detrendSmoothnessPriors } from '../dsp/detrend.js';
import { chromPulse, movingAverageInto } from './chrom.js';
import { posPulse } from './pos.js';

export interface PulseBand {
  lowHz: number;
  highHz: number;
}
/**
 * Default band for camera traces: 42–150 bpm, the rPPG-Toolbox paper band (0.75–2.5 Hz) widened a
 * little at the low end. The projections (POS alpha, CHROM alpha) are tuned inside this band: on
 * dark, noisy skin-patch traces, tuning them over 0.6–4 Hz let out-of-band noise steer alpha and
 * doubled the error (docs/accuracy.md).
 */
export const REST_BAND: PulseBand = { lowHz: 0.7, highHz: 2.5 };
/** Wide band (36–210 bpm) for exercise or clean waveforms. */
export const WIDE_BAND: PulseBand = { lowHz: 0.6, highHz: 3.5 };
/** @deprecated alias kept for the waveform stage default. */
export const PULSE_BAND = WIDE_BAND;

export function detrendLambda(sampleRateHz: number): number {
  return 100 * (sampleRateHz / 30) ** 2;
}

/**
 * Detrend and band-pass a raw pulse (or any PPG-like waveform) sampled at `sampleRateHz` (into `out`
 * when given: length x.length, may be x itself).
 */
export function conditionPulse(
  x: ArrayLike<number>,
  sampleRateHz: number,
  band: PulseBand = WIDE_BAND,
  out: Float64Array = new Float64Array(x.length),
): Float64Array {
  const d = detrendSmoothnessPriors(x, detrendLambda(sampleRateHz), out);
  const hi = Math.min(band.highHz, 0.45 * sampleRateHz);
  return bandPassZeroPhaseInto(d, sampleRateHz, band.lowHz, hi, d);
}

export interface PulseSignals {
  pos: Float64Array;
  chrom: Float64Array;
}

/**
 * Channel normalised by its 10 s moving mean and band-limited, plus one (into `out` when given, a
 * buffer of length ≥ c.length: the result is its first c.length entries): POS then tunes its alpha on
 * in-band fluctuations only (band-limited POS; the band-pass-before-alpha step is CHROM's, de Haan
 * & Jeanne 2013).
 */
export function bandLimitedChannel(
  c: Float64Array,
  sampleRateHz: number,
  band: PulseBand,
  out: Float64Array = new Float64Array(c.length),
): Float64Array {
  const n = c.length;
  if (meanWork.length < n) meanWork = new Float64Array(Math.max(n, 2 * meanWork.length));
  const m = movingAverageInto(c, Math.max(3, Math.round(10 * sampleRateHz)), meanWork);
  const x = out.length === n ? out : out.subarray(0, n);
  for (let i = 0; i < n; i++) x[i] = m[i] > 0 ? c[i] / m[i] - 1 : 0;
  const f = bandPassZeroPhaseInto(x, sampleRateHz, band.lowHz, Math.min(band.highHz, 0.45 * sampleRateHz), x);
  for (let i = 0; i < n; i++) f[i] += 1;
  return f;
}

/** The moving mean inside bandLimitedChannel (scratch: synchronous, never returned). */
let meanWork = new Float64Array(1024);

/** Both pulse signals from uniformly resampled RGB, conditioned and scaled to unit variance. */
export function extractPulses(
  r: Float64Array,
  g: Float64Array,
  b: Float64Array,
  sampleRateHz: number,
  band: PulseBand = REST_BAND,
): PulseSignals {
  const rb = bandLimitedChannel(r, sampleRateHz, band);
  const gb = bandLimitedChannel(g, sampleRateHz, band);
  const bb = bandLimitedChannel(b, sampleRateHz, band);
  const pos = conditionPulse(posPulse(rb, gb, bb, sampleRateHz), sampleRateHz, band);
  const chrom = conditionPulse(chromPulse(r, g, b, sampleRateHz, band), sampleRateHz, band);
  return { pos: unitVariance(pos), chrom: unitVariance(chrom) };
}

export function unitVariance(x: Float64Array): Float64Array {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * x[i];
  const sd = Math.sqrt(s / Math.max(1, x.length));
  if (sd > 0) for (let i = 0; i < x.length; i++) x[i] /= sd;
  return x;
}
