// Breathing rate from the respiratory modulations of the pulse: intensity (RIIV, baseline),
// amplitude (RIAV) and frequency (RIFV, respiratory sinus arrhythmia), each resampled from beat
// times to 4 Hz and analysed by periodogram, then fused: Karlen, Raman, Ansermino & Dumont,
// "Multiparameter respiratory rate estimation from the photoplethysmogram", IEEE TBME 60(7), 2013.
// We fuse by a quality-weighted sum of normalised spectra (each modulation's weight is its own
// peak concentration) instead of Karlen's mean-if-agreeing rule, and add head pitch from type-3
// telemetry when present (breathing moves the head: "Multimodal breathing rate estimation using
// facial motion and rPPG", ICASSP 2024). A respiratory waveform, when given, is analysed the same
// way (vitallens-core `src/signal/rate.rs`: periodogram bounded to 3–60 per minute).
import { powerSpectrum, bandBins, interpolatePeakBin, powerNear, type Spectrum } from '../dsp/spectrum.js';

export const RESP_RESAMPLE_HZ = 4;
/** Pulse-derived modulations: 6–40 breaths/min (lower rates are not resolvable from a minute of beats). */
export const RESP_BAND_PULSE = { lowHz: 0.1, highHz: 0.67 };
/** Direct waveforms (respiratory waveform, head motion): 3–60 per minute. */
export const RESP_BAND_WAVEFORM = { lowHz: 0.05, highHz: 1.0 };

export interface RespSource {
  name: 'riiv' | 'riav' | 'rifv' | 'head' | 'waveform';
  spectrum: Spectrum;
  /** Share of in-band power near the source's own peak, 0..1. */
  quality: number;
  rateBpm: number;
}

export interface BreathingEstimate {
  rateBrpm: number;
  confidence: number;
  sources: { name: string; rateBpm: number; quality: number }[];
}

/** Linear interpolation of (tSec, v) onto a uniform grid at `rateHz` over [t0, t1]. */
export function interpolateSeries(
  tSec: ArrayLike<number>,
  v: ArrayLike<number>,
  rateHz: number,
  t0: number,
  t1: number,
): Float64Array {
  const n = Math.max(0, Math.floor((t1 - t0) * rateHz) + 1);
  const out = new Float64Array(n);
  let j = 0;
  for (let i = 0; i < n; i++) {
    const t = t0 + i / rateHz;
    while (j + 1 < tSec.length - 1 && tSec[j + 1] <= t) j++;
    if (tSec.length === 1) {
      out[i] = v[0];
      continue;
    }
    const ta = tSec[j];
    const tb = tSec[j + 1];
    const w = tb > ta ? Math.min(1, Math.max(0, (t - ta) / (tb - ta))) : 0;
    out[i] = v[j] + w * (v[j + 1] - v[j]);
  }
  return out;
}

/** Removes a least-squares line (slow drifts that are not breathing). */
function detrendLinear(x: Float64Array): Float64Array {
  const n = x.length;
  let st = 0;
  let sx = 0;
  let stt = 0;
  let stx = 0;
  for (let i = 0; i < n; i++) {
    st += i;
    sx += x[i];
    stt += i * i;
    stx += i * x[i];
  }
  const den = n * stt - st * st;
  const slope = den !== 0 ? (n * stx - st * sx) / den : 0;
  const icpt = (sx - slope * st) / Math.max(1, n);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = x[i] - (icpt + slope * i);
  return out;
}

/** One respiratory source from a uniformly sampled series. */
export function respSource(
  name: RespSource['name'],
  x: Float64Array,
  sampleRateHz: number,
  band: { lowHz: number; highHz: number },
): RespSource | null {
  if (x.length < 8 * sampleRateHz * band.lowHz * 2) return null;
  const nfft = Math.max(1024, x.length);
  const s = powerSpectrum(detrendLinear(x), sampleRateHz, nfft);
  const [lo, hi] = bandBins(s, band.lowHz, band.highHz);
  if (hi <= lo) return null;
  let best = lo;
  let total = 0;
  for (let k = lo; k <= hi; k++) {
    total += s.power[k];
    if (s.power[k] > s.power[best]) best = k;
  }
  if (total <= 0) return null;
  const f = interpolatePeakBin(s.power, best) * s.binHz;
  const halfWidth = Math.max(0.03, 1.5 / (x.length / sampleRateHz));
  return { name, spectrum: s, quality: Math.min(1, powerNear(s, f, halfWidth) / total), rateBpm: f * 60 };
}

/**
 * Fuses sources by a quality-weighted sum of their in-band normalised spectra (all sources must
 * share the same spectrum grid, which `respSource` guarantees for equal-length inputs at 4 Hz).
 */
export function fuseBreathing(
  sources: RespSource[],
  band: { lowHz: number; highHz: number },
): BreathingEstimate | null {
  const usable = sources.filter((s) => s.quality > 0);
  if (usable.length === 0) return null;
  const ref = usable[0].spectrum;
  const [lo, hi] = bandBins(ref, band.lowHz, band.highHz);
  const fused = new Float64Array(ref.power.length);
  let wsum = 0;
  for (const s of usable) {
    if (s.spectrum.power.length !== ref.power.length) continue;
    let total = 0;
    for (let k = lo; k <= hi; k++) total += s.spectrum.power[k];
    const w = s.quality * s.quality;
    wsum += w;
    for (let k = lo; k <= hi; k++) fused[k] += (w * s.spectrum.power[k]) / total;
  }
  if (wsum <= 0) return null;
  let best = lo;
  let total = 0;
  for (let k = lo; k <= hi; k++) {
    total += fused[k];
    if (fused[k] > fused[best]) best = k;
  }
  const f = interpolatePeakBin(fused, best) * ref.binHz;
  const spec: Spectrum = { power: fused, binHz: ref.binHz, nfft: ref.nfft };
  const concentration = Math.min(1, powerNear(spec, f, 0.04) / total);
  // Agreement: quality-weighted share of sources whose own peak lies within 3/min of the fused one.
  let agree = 0;
  let all = 0;
  for (const s of usable) {
    all += s.quality;
    if (Math.abs(s.rateBpm - f * 60) <= 3) agree += s.quality;
  }
  const confidence = Math.min(1, Math.sqrt(concentration) * (all > 0 ? agree / all : 0));
  return {
    rateBrpm: f * 60,
    confidence,
    sources: usable.map((s) => ({ name: s.name, rateBpm: s.rateBpm, quality: s.quality })),
  };
}
