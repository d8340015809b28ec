// Smoothness-priors detrending: Tarvainen, Ranta-aho & Karjalainen, "An advanced detrending
// method with application to HRV analysis", IEEE TBME 49(2), 2002. The trend z solves
// (I + λ² D2ᵀD2) z = x with D2 the second-difference operator; we solve that symmetric
// pentadiagonal system in O(N) (the rPPG-Toolbox inverts a dense N×N matrix instead).

/**
 * Returns x minus its smoothness-priors trend. `lambda` is unitless (100 at ~30 Hz in the Toolbox).
 * Written into `out` when given (length x.length; may be x itself).
 */
export function detrendSmoothnessPriors(
  x: ArrayLike<number>,
  lambda = 100,
  out: Float64Array = new Float64Array(x.length),
): Float64Array {
  const n = x.length;
  if (n < 3) {
    let m = 0;
    for (let i = 0; i < n; i++) m += x[i];
    m /= Math.max(1, n);
    for (let i = 0; i < n; i++) out[i] = x[i] - m;
    return out;
  }
  if (trendWork.length < n) trendWork = new Float64Array(Math.max(n, 2 * trendWork.length));
  const trend = solveInto(x, lambda * lambda, trendWork);
  for (let i = 0; i < n; i++) out[i] = x[i] - trend[i];
  return out;
}

/** Scratch for the trend inside detrendSmoothnessPriors (synchronous, never returned). */
let trendWork = new Float64Array(1024);

/** The trend: solves (I + l2·D2ᵀD2) z = x by banded LDLᵀ (bandwidth 2). */
export function solveSmoothnessPriors(x: ArrayLike<number>, l2: number): Float64Array {
  return solveInto(x, l2, new Float64Array(x.length));
}

interface Factor {
  d: Float64Array;
  l1: Float64Array;
  lc: Float64Array;
}

/**
 * The LDLᵀ factors depend only on (n, l2), and the live analyses detrend windows of the same few
 * lengths every second: factors are kept for a handful of recent (n, l2) pairs (compared as numbers;
 * a string key cost two number-to-string conversions per call).
 */
const factors: { n: number; l2: number; f: Factor }[] = [];
const MAX_FACTORS = 16;
const MAX_CACHED_N = 8192;

function factorFor(n: number, l2: number): Factor {
  for (let i = 0; i < factors.length; i++) {
    const e = factors[i];
    if (e.n === n && e.l2 === l2) return e.f;
  }
  const f = factorize(n, l2);
  if (n <= MAX_CACHED_N) {
    if (factors.length >= MAX_FACTORS) factors.shift();
    factors.push({ n, l2, f });
  }
  return f;
}

function factorize(n: number, l2: number): Factor {
  // Diagonals of A = I + l2·D2ᵀD2: main a, first off-diagonal b, second off-diagonal c.
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  const c = new Float64Array(n);
  for (let k = 0; k < n - 2; k++) {
    // Row k of D2 is [1, -2, 1] at columns k..k+2; accumulate its outer product.
    a[k] += l2;
    a[k + 1] += 4 * l2;
    a[k + 2] += l2;
    b[k] += -2 * l2;
    b[k + 1] += -2 * l2;
    c[k] += l2;
  }
  for (let i = 0; i < n; i++) a[i] += 1;
  // LDLᵀ with L unit lower triangular, bandwidth 2: l1[i] = L[i+1][i], l2v[i] = L[i+2][i].
  const d = new Float64Array(n);
  const l1 = new Float64Array(n);
  const lc = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let di = a[i];
    if (i >= 1) di -= l1[i - 1] * l1[i - 1] * d[i - 1];
    if (i >= 2) di -= lc[i - 2] * lc[i - 2] * d[i - 2];
    d[i] = di;
    if (i + 1 < n) {
      let v = b[i];
      if (i >= 1) v -= lc[i - 1] * l1[i - 1] * d[i - 1];
      l1[i] = v / di;
    }
    if (i + 2 < n) lc[i] = c[i] / di;
  }
  return { d, l1, lc };
}

/** solveSmoothnessPriors into `z` (length ≥ x.length; only the first x.length entries are written). */
function solveInto(x: ArrayLike<number>, l2: number, z: Float64Array): Float64Array {
  const n = x.length;
  const { d, l1, lc } = factorFor(n, l2);
  for (let i = 0; i < n; i++) {
    let v = x[i];
    if (i >= 1) v -= l1[i - 1] * z[i - 1];
    if (i >= 2) v -= lc[i - 2] * z[i - 2];
    z[i] = v;
  }
  for (let i = 0; i < n; i++) z[i] /= d[i];
  for (let i = n - 1; i >= 0; i--) {
    let v = z[i];
    if (i + 1 < n) v -= l1[i] * z[i + 1];
    if (i + 2 < n) v -= lc[i] * z[i + 2];
    z[i] = v;
  }
  return z;
}
