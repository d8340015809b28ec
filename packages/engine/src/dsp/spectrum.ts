// Periodogram by FFT (radix-4 `fft.js`), as the rPPG-Toolbox's `calculate_metric_per_video`
// (scipy periodogram, nfft = next power of two) and vitallens-core `src/signal/rate.rs`
// (zero-padded periodogram bounded to a physiological band). Parabolic peak interpolation:
// J. O. Smith, "Spectral Audio Signal Processing", quadratic interpolation of spectral peaks.
import FFT from 'fft.js';

// `out` is a Float64Array rather than fft.js's plain array: the same float64 values, without boxed
// numbers or element-kind transitions (fft.js only indexes it).
// `used`: how many leading input values the last transform wrote (the rest are still zero).
const plans = new Map<number, { fft: FFT; input: Float64Array; out: Float64Array; used: number }>();

function plan(size: number): { fft: FFT; input: Float64Array; out: Float64Array; used: number } {
  let p = plans.get(size);
  if (!p) {
    const fft = new FFT(size);
    p = { fft, input: new Float64Array(size), out: new Float64Array(2 * size), used: 0 };
    plans.set(size, p);
  }
  return p;
}

/** Hann taper values for segment length n (the same expression as before, computed once per n). */
const hannWindows = new Map<number, Float64Array>();

export function hannWindow(n: number): Float64Array {
  let w = hannWindows.get(n);
  if (!w) {
    w = new Float64Array(n);
    for (let i = 0; i < n; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / n);
    if (hannWindows.size >= 64) hannWindows.clear();
    hannWindows.set(n, w);
  }
  return w;
}

export function nextPow2(n: number): number {
  let p = 4;
  while (p < n) p *= 2;
  return p;
}

export interface Spectrum {
  /** Power per bin for bins 0..nfft/2. */
  power: Float64Array;
  /** Bin spacing in Hz. */
  binHz: number;
  nfft: number;
}

/**
 * Power spectrum of x[from..to) with mean removed, optional Hann taper and zero padding to `nfft`
 * (a power of two ≥ the segment length; rounded up otherwise). `into`: an array for the power when
 * it has the right length (nfft/2 + 1), e.g. the previous window's, reused instead of allocated.
 */
export function powerSpectrum(
  x: ArrayLike<number>,
  sampleRateHz: number,
  nfft: number,
  opts: { from?: number; to?: number; hann?: boolean; into?: Float64Array } = {},
): Spectrum {
  const from = opts.from ?? 0;
  const to = opts.to ?? x.length;
  const n = to - from;
  const size = nextPow2(Math.max(nfft, n));
  const p = plan(size);
  const input = p.input;
  // Zero padding: only what the previous transform wrote beyond this segment needs clearing.
  const used = Math.max(0, n);
  if (p.used > used) input.fill(0, used, p.used);
  p.used = used;
  let m = 0;
  for (let i = from; i < to; i++) m += x[i];
  m /= Math.max(1, n);
  if (opts.hann ?? true) {
    const w = hannWindow(n);
    for (let i = 0; i < n; i++) input[i] = (x[from + i] - m) * w[i];
  } else {
    for (let i = 0; i < n; i++) input[i] = (x[from + i] - m) * 1;
  }
  p.fft.realTransform(p.out as unknown as number[], input);
  const half = size / 2;
  const power = opts.into && opts.into.length === half + 1 ? opts.into : new Float64Array(half + 1);
  const out = p.out;
  for (let k = 0; k <= half; k++) {
    const re = out[2 * k];
    const im = out[2 * k + 1];
    power[k] = re * re + im * im;
  }
  return { power, binHz: sampleRateHz / size, nfft: size };
}

/** Index range [lo, hi] of bins inside [lowHz, highHz]. */
export function bandBins(s: Spectrum, lowHz: number, highHz: number): [number, number] {
  const lo = Math.max(1, Math.ceil(lowHz / s.binHz));
  const hi = Math.min(s.power.length - 1, Math.floor(highHz / s.binHz));
  return [lo, hi];
}

/** Sub-bin peak position (in bins) by a parabola through the log powers around bin k. */
export function interpolatePeakBin(power: ArrayLike<number>, k: number): number {
  if (k <= 0 || k >= power.length - 1) return k;
  const a = Math.log(power[k - 1] + 1e-300);
  const b = Math.log(power[k] + 1e-300);
  const c = Math.log(power[k + 1] + 1e-300);
  const den = a - 2 * b + c;
  if (den >= 0) return k;
  const delta = (0.5 * (a - c)) / den;
  return k + Math.max(-0.5, Math.min(0.5, delta));
}

/** Highest bin within [lowHz, highHz] and its interpolated frequency. */
export function spectralPeak(
  s: Spectrum,
  lowHz: number,
  highHz: number,
): { bin: number; freqHz: number; power: number } {
  const [lo, hi] = bandBins(s, lowHz, highHz);
  let best = lo;
  for (let k = lo + 1; k <= hi; k++) if (s.power[k] > s.power[best]) best = k;
  return { bin: best, freqHz: interpolatePeakBin(s.power, best) * s.binHz, power: s.power[best] };
}

/** Sum of power within ±halfWidthHz of freqHz (clipped to the spectrum). */
export function powerNear(s: Spectrum, freqHz: number, halfWidthHz: number): number {
  const lo = Math.max(0, Math.ceil((freqHz - halfWidthHz) / s.binHz));
  const hi = Math.min(s.power.length - 1, Math.floor((freqHz + halfWidthHz) / s.binHz));
  let sum = 0;
  for (let k = lo; k <= hi; k++) sum += s.power[k];
  return sum;
}

/** Sum of power over bins [lo, hi]. */
export function powerInBins(s: Spectrum, lo: number, hi: number): number {
  let sum = 0;
  for (let k = lo; k <= hi; k++) sum += s.power[k];
  return sum;
}
