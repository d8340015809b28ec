// Butterworth band-pass as cascaded 2nd-order sections from the bilinear transform
// (R. Bristow-Johnson, "Audio EQ Cookbook", Q = 1/√2 high-pass and low-pass), applied
// forward and backward for zero phase like scipy.signal.filtfilt (rPPG-Toolbox
// `evaluation/post_process.py`). Edge transients are reduced by odd reflection padding.

export interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

function prewarp(cutoffHz: number, sampleRateHz: number): { cos: number; alpha: number } {
  const w0 = (2 * Math.PI * Math.min(cutoffHz, 0.49 * sampleRateHz)) / sampleRateHz;
  return { cos: Math.cos(w0), alpha: Math.sin(w0) / (2 * Math.SQRT1_2) };
}

export function lowPassBiquad(cutoffHz: number, sampleRateHz: number): Biquad {
  const { cos, alpha } = prewarp(cutoffHz, sampleRateHz);
  const a0 = 1 + alpha;
  return {
    b0: (1 - cos) / 2 / a0,
    b1: (1 - cos) / a0,
    b2: (1 - cos) / 2 / a0,
    a1: (-2 * cos) / a0,
    a2: (1 - alpha) / a0,
  };
}

export function highPassBiquad(cutoffHz: number, sampleRateHz: number): Biquad {
  const { cos, alpha } = prewarp(cutoffHz, sampleRateHz);
  const a0 = 1 + alpha;
  return {
    b0: (1 + cos) / 2 / a0,
    b1: -(1 + cos) / a0,
    b2: (1 + cos) / 2 / a0,
    a1: (-2 * cos) / a0,
    a2: (1 - alpha) / a0,
  };
}

/**
 * Coefficients by (kind, cutoff, rate): the live analyses ask for the same few filters every second.
 * Keyed by the numbers themselves (a string key cost a number-to-string conversion per call).
 */
const biquads = { hp: new Map<number, Map<number, Biquad>>(), lp: new Map<number, Map<number, Biquad>>() };
let cachedCount = 0;

function cachedBiquad(kind: 'hp' | 'lp', cutoffHz: number, sampleRateHz: number): Biquad {
  const byRate = biquads[kind].get(sampleRateHz);
  let q = byRate?.get(cutoffHz);
  if (!q) {
    q = kind === 'hp' ? highPassBiquad(cutoffHz, sampleRateHz) : lowPassBiquad(cutoffHz, sampleRateHz);
    if (cachedCount >= 256) {
      biquads.hp.clear();
      biquads.lp.clear();
      cachedCount = 0;
    }
    let m = biquads[kind].get(sampleRateHz);
    if (!m) biquads[kind].set(sampleRateHz, (m = new Map()));
    m.set(cutoffHz, q);
    cachedCount++;
  }
  return q;
}

/** Padded working buffer shared by the zero-phase filters (synchronous, never returned). */
let work = new Float64Array(1024);

/** In-place direct-form-II-transposed biquad over x[from..to) in the given direction. */
function runBiquad(q: Biquad, x: Float64Array, reverse: boolean, n = x.length): void {
  let z1 = 0;
  let z2 = 0;
  // Start from the steady state for the first sample to avoid a step transient.
  const x0 = reverse ? x[n - 1] : x[0];
  const dcGain = (q.b0 + q.b1 + q.b2) / (1 + q.a1 + q.a2);
  const y0 = x0 * dcGain;
  z1 = y0 - q.b0 * x0;
  z2 = q.b2 * x0 - q.a2 * y0;
  for (let k = 0; k < n; k++) {
    const i = reverse ? n - 1 - k : k;
    const xi = x[i];
    const yi = q.b0 * xi + z1;
    z1 = q.b1 * xi - q.a1 * yi + z2;
    z2 = q.b2 * xi - q.a2 * yi;
    x[i] = yi;
  }
}

/**
 * A high-pass section then a low-pass section over x[0..n) in one direction, fused into one loop:
 * the same operations in the same order as runBiquad(hp) followed by runBiquad(lp) (the low-pass
 * starts from the steady state of the high-pass's first output), one pass over memory instead of two.
 */
function runBiquadPair(hp: Biquad, lp: Biquad, x: Float64Array, reverse: boolean, n: number): void {
  const hb0 = hp.b0;
  const hb1 = hp.b1;
  const hb2 = hp.b2;
  const ha1 = hp.a1;
  const ha2 = hp.a2;
  const lb0 = lp.b0;
  const lb1 = lp.b1;
  const lb2 = lp.b2;
  const la1 = lp.a1;
  const la2 = lp.a2;
  const first = reverse ? n - 1 : 0;
  const x0 = x[first];
  const hy0 = x0 * ((hb0 + hb1 + hb2) / (1 + ha1 + ha2));
  let h1 = hy0 - hb0 * x0;
  let h2 = hb2 * x0 - ha2 * hy0;
  // The low-pass's first input is the high-pass's first output.
  const u0 = hb0 * x0 + h1;
  const ly0 = u0 * ((lb0 + lb1 + lb2) / (1 + la1 + la2));
  let l1 = ly0 - lb0 * u0;
  let l2 = lb2 * u0 - la2 * ly0;
  const step = reverse ? -1 : 1;
  for (let k = 0, i = first; k < n; k++, i += step) {
    const xi = x[i];
    const ui = hb0 * xi + h1;
    h1 = hb1 * xi - ha1 * ui + h2;
    h2 = hb2 * xi - ha2 * ui;
    const yi = lb0 * ui + l1;
    l1 = lb1 * ui - la1 * yi + l2;
    l2 = lb2 * ui - la2 * yi;
    x[i] = yi;
  }
}

/**
 * Zero-phase Butterworth band-pass (2nd-order high-pass and 2nd-order low-pass sections, each run
 * forward and backward, so 4th-order magnitude roll-off at each edge).
 */
export function bandPassZeroPhase(
  x: ArrayLike<number>,
  sampleRateHz: number,
  lowHz: number,
  highHz: number,
): Float64Array {
  return bandPassZeroPhaseInto(x, sampleRateHz, lowHz, highHz, new Float64Array(x.length));
}

/** bandPassZeroPhase writing into `out` (length ≥ x.length; `out` may be `x` itself); returns `out`. */
export function bandPassZeroPhaseInto(
  x: ArrayLike<number>,
  sampleRateHz: number,
  lowHz: number,
  highHz: number,
  out: Float64Array,
): Float64Array {
  const n = x.length;
  const pad = zeroPhasePad(n, sampleRateHz);
  const len = n + 2 * pad;
  if (len < 0) return new Float64Array(len); // an empty input: the same RangeError as ever
  const buf = zeroPhaseBuffer(len);
  for (let i = 0; i < n; i++) buf[pad + i] = x[i];
  bandPassPadded(buf, n, pad, sampleRateHz, lowHz, highHz);
  for (let i = 0; i < n; i++) out[i] = buf[pad + i];
  return out;
}

/** Samples of odd reflection each side of n samples for the zero-phase filters (n − 1 at most). */
export function zeroPhasePad(n: number, sampleRateHz: number): number {
  return Math.min(n - 1, Math.round(sampleRateHz * 1.5));
}

/** A second padded buffer, for callers that filter two signals side by side (zeroPhaseBuffer(len, 1)). */
let work2 = new Float64Array(0);

/**
 * The zero-phase filters' padded working buffer (`which` 0, shared with bandPassZeroPhase), or a
 * second one (`which` 1), at least `len` long, for callers that write their signal straight into it
 * (bandPassPadded). Valid until the next zero-phase filter call (buffer 0) or the caller's next use.
 */
export function zeroPhaseBuffer(len: number, which: 0 | 1 = 0): Float64Array {
  if (which === 1) {
    if (work2.length < len) work2 = new Float64Array(Math.max(len, 2 * work2.length));
    return work2;
  }
  if (work.length < len) work = new Float64Array(Math.max(len, 2 * work.length));
  return work;
}

/**
 * bandPassZeroPhase of the n ≥ 1 samples the caller wrote at buf[pad .. pad + n) (pad =
 * zeroPhasePad(n, sampleRateHz)): pads them by odd reflection and filters in place, leaving the
 * result at buf[pad .. pad + n) (what bandPassZeroPhase returns, without the copies in and out).
 */
export function bandPassPadded(
  buf: Float64Array,
  n: number,
  pad: number,
  sampleRateHz: number,
  lowHz: number,
  highHz: number,
): void {
  // Odd reflection about the end samples (as filtfilt's default padding).
  const first = buf[pad];
  const lastV = buf[pad + n - 1];
  for (let i = 1; i <= pad; i++) {
    buf[pad - i] = 2 * first - buf[pad + Math.min(n - 1, i)];
    buf[pad + n - 1 + i] = 2 * lastV - buf[pad + Math.max(0, n - 1 - i)];
  }
  const hp = cachedBiquad('hp', lowHz, sampleRateHz);
  const lp = cachedBiquad('lp', highHz, sampleRateHz);
  const len = n + 2 * pad;
  runBiquadPair(hp, lp, buf, false, len);
  runBiquadPair(hp, lp, buf, true, len);
}

/** Zero-phase low-pass (2nd order, forward-backward). */
export function lowPassZeroPhase(x: ArrayLike<number>, sampleRateHz: number, cutoffHz: number): Float64Array {
  const buf = Float64Array.from(x as ArrayLike<number>);
  if (buf.length < 3) return buf;
  const lp = cachedBiquad('lp', cutoffHz, sampleRateHz);
  runBiquad(lp, buf, false);
  runBiquad(lp, buf, true);
  return buf;
}
