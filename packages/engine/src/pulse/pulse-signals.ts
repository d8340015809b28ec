// Trace → pulse: POS and CHROM (see pos.ts, chrom.ts), then smoothness-priors detrending
// (Tarvainen et al., TBME 2002; λ = 100 at 30 Hz, scaled with the rate squared so the cut-off
// stays ~0.05 Hz) and a zero-phase Butterworth band-pass (rPPG-Toolbox `post_process.py`).
import { bandPassZeroPhase } from '../dsp/butterworth.js';
import { detrendSmoothnessPriors } from '../dsp/detrend.js';
import { chromPulse } from './chrom.js';
import { posPulse } from './pos.js';

/** Pulse pass band: 36–240 bpm, wider than the rate search (40–200) so edges are not attenuated. */
export const PULSE_BAND = { lowHz: 0.6, highHz: 4.0 };

export function detrendLambda(sampleRateHz: number): number {
  return 100 * (sampleRateHz / 30) ** 2;
}

/** Detrend and band-pass a raw pulse (or any PPG-like waveform) sampled at `sampleRateHz`. */
export function conditionPulse(x: ArrayLike<number>, sampleRateHz: number, band = PULSE_BAND): Float64Array {
  const d = detrendSmoothnessPriors(x, detrendLambda(sampleRateHz));
  const hi = Math.min(band.highHz, 0.45 * sampleRateHz);
  return bandPassZeroPhase(d, sampleRateHz, band.lowHz, hi);
}

export interface PulseSignals {
  pos: Float64Array;
  chrom: Float64Array;
}

/** Both pulse signals from uniformly resampled RGB, conditioned and scaled to unit variance. */
export function extractPulses(r: Float64Array, g: Float64Array, b: Float64Array, sampleRateHz: number): PulseSignals {
  const pos = conditionPulse(posPulse(r, g, b, sampleRateHz), sampleRateHz);
  const chrom = conditionPulse(chromPulse(r, g, b, sampleRateHz, PULSE_BAND), sampleRateHz);
  return { pos: unitVariance(pos), chrom: unitVariance(chrom) };
}

export function unitVariance(x: Float64Array): Float64Array {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * x[i];
  const sd = Math.sqrt(s / Math.max(1, x.length));
  if (sd > 0) for (let i = 0; i < x.length; i++) x[i] /= sd;
  return x;
}
