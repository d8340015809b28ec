// Descriptive statistics over typed arrays (no citation needed beyond textbook definitions;
// the median-of-intervals rule follows the spec, "Streaming protocol", crop rule).

export type NumArray = ArrayLike<number>;

export function mean(x: NumArray, from = 0, to = x.length): number {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i];
  return to > from ? s / (to - from) : 0;
}

export function std(x: NumArray, from = 0, to = x.length): number {
  const n = to - from;
  if (n < 2) return 0;
  const m = mean(x, from, to);
  let s = 0;
  for (let i = from; i < to; i++) s += (x[i] - m) * (x[i] - m);
  return Math.sqrt(s / (n - 1));
}

/** Median of a copy; NaN for an empty input. */
export function median(x: NumArray): number {
  return quantile(x, 0.5);
}

/** Linear-interpolated quantile q in [0,1] of a copy of x. */
export function quantile(x: NumArray, q: number): number {
  const n = x.length;
  if (n === 0) return NaN;
  const s = Float64Array.from(x as ArrayLike<number>).sort();
  const pos = Math.min(n - 1, Math.max(0, q * (n - 1)));
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

export function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

/** Rounds to `digits` decimals (used for the measurement's published precision). */
export function roundTo(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** Pearson correlation; 0 when either input is constant. */
export function pearson(a: NumArray, b: NumArray): number {
  const n = Math.min(a.length, b.length);
  if (n < 2) return 0;
  const ma = mean(a, 0, n);
  const mb = mean(b, 0, n);
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    const da = a[i] - ma;
    const db = b[i] - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : 0;
}

/** Zero-mean, unit-variance copy (all zeros when constant). */
export function standardize(x: NumArray): Float64Array {
  const out = new Float64Array(x.length);
  const m = mean(x);
  const s = std(x);
  if (s === 0) return out;
  for (let i = 0; i < x.length; i++) out[i] = (x[i] - m) / s;
  return out;
}
