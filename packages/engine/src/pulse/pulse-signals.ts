// Trace → pulse: POS and CHROM (see pos.ts, chrom.ts), then smoothness-priors detrending
// (Tarvainen et al., TBME 2002; λ = 100 at 30 Hz, scaled with the rate squared so the cut-off
// stays ~0.05 Hz) and a zero-phase Butterworth band-pass (rPPG-Toolbox `post_process.py`).
import { bandPassPadded, bandPassZeroPhaseInto, zeroPhaseBuffer, zeroPhasePad } from '../dsp/butterworth.js';
import { detrendSmoothnessPriors } from '../dsp/detrend.js';
import { chromPulse, movingAverageInto } from './chrom.js';
import { posPulse } from './pos.js';

/** One colour trace, a sample per frame per channel: the unit every pulse method here works on. */
export interface Channels {
  r: Float64Array;
  g: Float64Array;
  b: Float64Array;
}

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
  const n = x.length;
  const hi = Math.min(band.highHz, 0.45 * sampleRateHz);
  if (n < 2) {
    const d = detrendSmoothnessPriors(x, detrendLambda(sampleRateHz), out);
    return bandPassZeroPhaseInto(d, sampleRateHz, band.lowHz, hi, d);
  }
  // The detrended pulse is written straight into the band-pass's padded buffer (the same values).
  const pad = zeroPhasePad(n, sampleRateHz);
  const buf = zeroPhaseBuffer(n + 2 * pad);
  detrendSmoothnessPriors(x, detrendLambda(sampleRateHz), buf.subarray(pad, pad + n));
  bandPassPadded(buf, n, pad, sampleRateHz, band.lowHz, hi);
  for (let i = 0; i < n; i++) out[i] = buf[pad + i];
  return out;
}

export interface PulseSignals {
  pos: Float64Array;
  chrom: Float64Array;
}

/**
 * Channel normalised by its 10 s moving mean and band-limited, plus one (into `out` when given, a
 * buffer of length ≥ c.length: the result is its first c.length entries; with `minusOne`, that
 * value minus one again, rounded twice as the two steps would): POS then tunes its alpha on
 * in-band fluctuations only (band-limited POS; the band-pass-before-alpha step is CHROM's, de Haan
 * & Jeanne 2013).
 */
export function bandLimitedChannel(
  c: Float64Array,
  sampleRateHz: number,
  band: PulseBand,
  out: Float64Array = new Float64Array(c.length),
  minusOne = false,
): Float64Array {
  const n = c.length;
  const x = out.length === n ? out : out.subarray(0, n);
  const len = Math.max(3, Math.round(10 * sampleRateHz));
  const hi = Math.min(band.highHz, 0.45 * sampleRateHz);
  if (n < 2) {
    const m = movingAverageInto(c, len, new Float64Array(n));
    for (let i = 0; i < n; i++) x[i] = m[i] > 0 ? c[i] / m[i] - 1 : 0;
    const f = bandPassZeroPhaseInto(x, sampleRateHz, band.lowHz, hi, x);
    for (let i = 0; i < n; i++) f[i] += 1;
    if (minusOne) for (let i = 0; i < n; i++) f[i] -= 1;
    return f;
  }
  // movingAverage (chrom.ts), the normalisation and the band-pass fused: the normalised channel is
  // written straight into the filter's padded buffer (the same values, without the copies).
  if (meanWork.length < n + 1) meanWork = new Float64Array(Math.max(n + 1, 2 * meanWork.length));
  const cs = meanWork;
  cs[0] = 0;
  for (let i = 0; i < n; i++) cs[i + 1] = cs[i] + c[i];
  const half = len >> 1;
  const pad = zeroPhasePad(n, sampleRateHz);
  const buf = zeroPhaseBuffer(n + 2 * pad);
  for (let i = 0; i < n; i++) {
    const a = Math.max(0, i - half);
    const b = Math.min(n, i + half + 1);
    const m = (cs[b] - cs[a]) / (b - a);
    buf[pad + i] = m > 0 ? c[i] / m - 1 : 0;
  }
  bandPassPadded(buf, n, pad, sampleRateHz, band.lowHz, hi);
  if (minusOne) for (let i = 0; i < n; i++) x[i] = buf[pad + i] + 1 - 1;
  else for (let i = 0; i < n; i++) x[i] = buf[pad + i] + 1;
  return x;
}

/** Prefix sums of the moving mean inside bandLimitedChannel (scratch: synchronous, never returned). */
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
