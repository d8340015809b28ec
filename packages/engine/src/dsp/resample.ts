// Uniform-grid resampling of an irregularly timed trace by linear interpolation. The grid rate
// comes from the median inter-frame interval (spec, "Streaming protocol": "The sampling rate for
// the blood-pressure window derives from the median inter-frame interval"); linear
// interpolation across short gaps follows common rPPG practice (pyVHR, rPPG-Toolbox resampling
// of labels with np.interp).

export interface UniformSeries {
  /** Resampled channels, each of length n. */
  channels: Float64Array[];
  sampleRateHz: number;
  /** Capture time of sample 0, microseconds. */
  t0Micros: number;
  /** Samples that fell inside a gap longer than `maxGapSec` (interpolated, not observed). */
  gapSamples: number;
}

/** Scratch for medianIntervalMicros (synchronous, never returned). */
let intervalWork = new Float64Array(1024);

/** Median interval of increasing timestamps (µs); NaN with fewer than two. */
export function medianIntervalMicros(tMicros: ArrayLike<number>, from = 0, to = tMicros.length): number {
  const n = to - from;
  if (n < 2) return NaN;
  if (intervalWork.length < n - 1) intervalWork = new Float64Array(Math.max(n - 1, 2 * intervalWork.length));
  const d = intervalWork;
  const len = n - 1;
  for (let i = from + 1; i < to; i++) d[i - from - 1] = tMicros[i] - tMicros[i - 1];
  // The middle order statistics by selection (the same values a full sort puts there).
  const m = len >> 1;
  if (len % 2) return selectKth(d, len, m);
  const upper = selectKth(d, len, m);
  // After selecting m, d[0..m) holds the m smallest: the lower middle value is their maximum.
  let lower = d[0];
  for (let i = 1; i < m; i++) if (d[i] > lower) lower = d[i];
  return 0.5 * (lower + upper);
}

/**
 * The k-th smallest of a[0..n) (Hoare's selection, median-of-three pivot), partially reordering
 * a so that a[0..k) ≤ a[k] ≤ a[k+1..n). Intervals are finite, so the comparisons order them as the
 * numeric sort did.
 */
function selectKth(a: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    // Median of three as the pivot, left in a[mid].
    if (a[mid] < a[lo]) swap(a, mid, lo);
    if (a[hi] < a[lo]) swap(a, hi, lo);
    if (a[hi] < a[mid]) swap(a, hi, mid);
    const pivot = a[mid];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        swap(a, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/**
 * Resamples channels observed at strictly increasing times tMicros[from..to) onto a uniform grid at
 * `sampleRateHz` starting at the first timestamp.
 */
export function resampleUniform(
  tMicros: ArrayLike<number>,
  channels: ArrayLike<number>[],
  sampleRateHz: number,
  opts: { from?: number; to?: number; maxGapSec?: number } = {},
): UniformSeries {
  const from = opts.from ?? 0;
  const to = opts.to ?? tMicros.length;
  const maxGapMicros = (opts.maxGapSec ?? 0.5) * 1e6;
  const t0 = tMicros[from];
  const span = tMicros[to - 1] - t0;
  const stepMicros = 1e6 / sampleRateHz;
  const n = to - from > 0 ? Math.floor(span / stepMicros + 1e-9) + 1 : 0;
  const out = channels.map(() => new Float64Array(n));
  let j = from;
  let gapSamples = 0;
  for (let i = 0; i < n; i++) {
    const t = t0 + i * stepMicros;
    while (j + 1 < to - 1 && tMicros[j + 1] <= t) j++;
    const ta = tMicros[j];
    const tb = j + 1 < to ? tMicros[j + 1] : ta;
    const w = tb > ta ? Math.min(1, Math.max(0, (t - ta) / (tb - ta))) : 0;
    if (tb - ta > maxGapMicros) gapSamples++;
    for (let c = 0; c < channels.length; c++) {
      const ch = channels[c];
      out[c][i] = ch[j] + w * ((j + 1 < to ? ch[j + 1] : ch[j]) - ch[j]);
    }
  }
  return { channels: out, sampleRateHz, t0Micros: t0, gapSamples };
}

/**
 * Decimation by an integer factor with a boxcar (integrate-and-dump) anti-alias filter: each output
 * sample is the mean of `factor` consecutive input samples, so white sensor noise above the new
 * Nyquist rate is averaged out instead of folding into the band (plain subsampling would raise the
 * in-band noise density by `factor`). Gain at f: |sinc(f·factor/fs)|, 0.90 at 2.5 Hz for 30 → 10 Hz.
 */
export function decimateMean(x: Float64Array, factor: number): Float64Array {
  if (factor <= 1) return x;
  const n = Math.floor(x.length / factor);
  const out = new Float64Array(n);
  const inv = 1 / factor;
  for (let i = 0, j = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < factor; k++, j++) s += x[j];
    out[i] = s * inv;
  }
  return out;
}

/**
 * `resampleUniform` followed by `decimateMean(·, factor)` on every channel, in one pass and without
 * the full-rate arrays: each output is the same sum, in the same order, of the same interpolated
 * values, so the result is bit-identical to the two-step form.
 */
export function resampleDecimated(
  tMicros: ArrayLike<number>,
  channels: ArrayLike<number>[],
  sampleRateHz: number,
  factor: number,
  opts: { from?: number; to?: number } = {},
): Float64Array[] {
  if (factor <= 1) return resampleUniform(tMicros, channels, sampleRateHz, opts).channels;
  const from = opts.from ?? 0;
  const to = opts.to ?? tMicros.length;
  const m = decimatedLength(tMicros, sampleRateHz, factor, from, to);
  const out = channels.map(() => new Float64Array(m));
  resampleDecimatedInto(tMicros, channels, sampleRateHz, factor, from, to, m, out);
  return out;
}

/** Number of samples resampleDecimated returns for tMicros[from..to) (the grid as resampleUniform's). */
export function decimatedLength(
  tMicros: ArrayLike<number>,
  sampleRateHz: number,
  factor: number,
  from: number,
  to: number,
): number {
  const t0 = tMicros[from];
  const span = tMicros[to - 1] - t0;
  const stepMicros = 1e6 / sampleRateHz;
  const n = to - from > 0 ? Math.floor(span / stepMicros + 1e-9) + 1 : 0;
  return Math.floor(n / factor);
}

/** Interpolation positions (scratch for resampleDecimatedInto: synchronous, never returned). */
let posIndex = new Int32Array(1024);
let posWeight = new Float64Array(1024);

/**
 * The decimated outputs 0..m) of resampleDecimated into `out` (one array of length ≥ m per channel).
 * The interpolation positions (source index and weight of each full-rate sample) are computed once
 * for all channels; each channel then sums the same terms in the same order as the fused loop.
 */
export function resampleDecimatedInto(
  tMicros: ArrayLike<number>,
  channels: ArrayLike<number>[],
  sampleRateHz: number,
  factor: number,
  from: number,
  to: number,
  m: number,
  out: Float64Array[],
): void {
  const t0 = tMicros[from];
  const stepMicros = 1e6 / sampleRateHz;
  const total = m * factor;
  if (posIndex.length < total) {
    posIndex = new Int32Array(Math.max(total, 2 * posIndex.length));
    posWeight = new Float64Array(posIndex.length);
  }
  const idx = posIndex;
  const wt = posWeight;
  let j = from;
  for (let i = 0; i < total; i++) {
    const t = t0 + i * stepMicros;
    while (j + 1 < to - 1 && tMicros[j + 1] <= t) j++;
    const ta = tMicros[j];
    const tb = j + 1 < to ? tMicros[j + 1] : ta;
    idx[i] = j;
    wt[i] = tb > ta ? Math.min(1, Math.max(0, (t - ta) / (tb - ta))) : 0;
  }
  const inv = 1 / factor;
  const last = to - 1;
  for (let c = 0; c < channels.length; c++) {
    const ch = channels[c];
    const o = out[c];
    if (to - from >= 2 && (factor === 2 || factor === 3)) {
      // The search above stops at j ≤ to − 2, so every position has a next sample; the sums of
      // the common factors written out (0 + the first term, then the others in order, as below).
      if (factor === 2) {
        for (let k = 0, i = 0; k < m; k++, i += 2) {
          const a0 = idx[i];
          const a1 = idx[i + 1];
          const x0 = ch[a0];
          const x1 = ch[a1];
          let s = 0 + (x0 + wt[i] * (ch[a0 + 1] - x0));
          s += x1 + wt[i + 1] * (ch[a1 + 1] - x1);
          o[k] = s * inv;
        }
      } else {
        for (let k = 0, i = 0; k < m; k++, i += 3) {
          const a0 = idx[i];
          const a1 = idx[i + 1];
          const a2 = idx[i + 2];
          const x0 = ch[a0];
          const x1 = ch[a1];
          const x2 = ch[a2];
          let s = 0 + (x0 + wt[i] * (ch[a0 + 1] - x0));
          s += x1 + wt[i + 1] * (ch[a1 + 1] - x1);
          s += x2 + wt[i + 2] * (ch[a2 + 1] - x2);
          o[k] = s * inv;
        }
      }
      continue;
    }
    for (let k = 0, i = 0; k < m; k++) {
      let s = 0;
      for (let e = i + factor; i < e; i++) {
        const a = idx[i];
        const x = ch[a];
        s += x + wt[i] * ((a < last ? ch[a + 1] : x) - x);
      }
      o[k] = s * inv;
    }
  }
}
