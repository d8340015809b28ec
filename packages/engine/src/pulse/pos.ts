// POS: Wang, den Brinker, Stuijk & de Haan, "Algorithmic principles of remote PPG",
// IEEE TBME 64(7), 2017. Per sliding window of ~1.6 s: temporal normalisation by the window
// mean, projection on the plane orthogonal to skin tone (rows (0,1,-1) and (-2,1,1)), alpha
// tuning h = S1 + (σ1/σ2)·S2, mean removal and overlap-add with stride 1 (rPPG-Toolbox
// `POS_WANG.py`). The output is negated so that peaks mark systole (vitallens-python `pos.py`).

/** Prefix sums and coefficient differences (scratch: synchronous, never returned). */
let work = new Float64Array(0);

/**
 * Pulse signal from uniformly sampled RGB channels at `sampleRateHz`.
 *
 * Computed in O(n) rather than O(n·l): within a window starting at s with channel means (mr, mg, mb),
 * S1 = g/mg − b/mb and S2 = −2r/mr + g/mg + b/mb are linear in the samples, so their window means
 * and variances follow from prefix sums of r, g, b and of their pairwise products, and the
 * overlap-added contribution of every window to sample i is
 *   r[i]·(−2α/mr) + g[i]·((1+α)/mg) + b[i]·((α−1)/mb) − mean_h,
 * i.e. each channel times a per-window coefficient summed over the l windows covering i (a running
 * sum of coefficients). Same result as the per-window loop up to rounding. Written into `out` when
 * given (length r.length).
 */
export function posPulse(
  r: ArrayLike<number>,
  g: ArrayLike<number>,
  b: ArrayLike<number>,
  sampleRateHz: number,
  out: Float64Array = new Float64Array(r.length),
): Float64Array {
  const n = r.length;
  const l = Math.max(4, Math.ceil(1.6 * sampleRateHz));
  if (n < l) return out.fill(0);
  if (work.length < 12 * (n + 1)) work = new Float64Array(Math.max(12 * (n + 1), 2 * work.length));
  // Prefix sums (index k holds the sum over [0, k)).
  const P = work;
  P.fill(0, 0, 9);
  for (let i = 0; i < n; i++) {
    const ri = r[i];
    const gi = g[i];
    const bi = b[i];
    const o = 9 * i;
    const q = o + 9;
    P[q] = P[o] + ri;
    P[q + 1] = P[o + 1] + gi;
    P[q + 2] = P[o + 2] + bi;
    P[q + 3] = P[o + 3] + ri * ri;
    P[q + 4] = P[o + 4] + gi * gi;
    P[q + 5] = P[o + 5] + bi * bi;
    P[q + 6] = P[o + 6] + ri * gi;
    P[q + 7] = P[o + 7] + ri * bi;
    P[q + 8] = P[o + 8] + gi * bi;
  }
  const windows = n - l + 1;
  // Per-window coefficients of r, g, b, as differences for a running sum.
  const dr = work.subarray(9 * (n + 1), 10 * (n + 1)).fill(0);
  const dg = work.subarray(10 * (n + 1), 11 * (n + 1)).fill(0);
  const db = work.subarray(11 * (n + 1), 12 * (n + 1)).fill(0);
  for (let st = 0; st < windows; st++) {
    const a = 9 * st;
    const e = 9 * (st + l);
    const sr = P[e] - P[a];
    const sg = P[e + 1] - P[a + 1];
    const sb = P[e + 2] - P[a + 2];
    if (sr <= 0 || sg <= 0 || sb <= 0) continue;
    // Normalised channels x/m with m = s/l; their window sums are l, second moments below.
    const ir = l / sr;
    const ig = l / sg;
    const ib = l / sb;
    const rr = (P[e + 3] - P[a + 3]) * ir * ir;
    const gg = (P[e + 4] - P[a + 4]) * ig * ig;
    const bb = (P[e + 5] - P[a + 5]) * ib * ib;
    const rg = (P[e + 6] - P[a + 6]) * ir * ig;
    const rb = (P[e + 7] - P[a + 7]) * ir * ib;
    const gb = (P[e + 8] - P[a + 8]) * ig * ib;
    // Sums of squares about the mean (each normalised channel has mean 1, so S1 has mean 0, S2 mean 0).
    const v1 = gg + bb - 2 * gb; // Σ(g' − b')² − l·0²
    const v2 = 4 * rr + gg + bb - 4 * rg - 4 * rb + 2 * gb; // Σ(−2r' + g' + b')²
    const alpha = v2 > 0 && v1 > 0 ? Math.sqrt(v1 / v2) : 0;
    // h = S1 + α·S2 (means are zero); out −= h over the window.
    const cr = -2 * alpha * ir;
    const cg = (1 + alpha) * ig;
    const cb = (alpha - 1) * ib;
    dr[st] -= cr;
    dr[st + l] += cr;
    dg[st] -= cg;
    dg[st + l] += cg;
    db[st] -= cb;
    db[st + l] += cb;
  }
  let kr = 0;
  let kg = 0;
  let kb = 0;
  for (let i = 0; i < n; i++) {
    kr += dr[i];
    kg += dg[i];
    kb += db[i];
    out[i] = kr * r[i] + kg * g[i] + kb * b[i];
  }
  return out;
}
