// POS: Wang, den Brinker, Stuijk & de Haan, "Algorithmic principles of remote PPG",
// IEEE TBME 64(7), 2017. Per sliding window of ~1.6 s: temporal normalisation by the window
// mean, projection on the plane orthogonal to skin tone (rows (0,1,-1) and (-2,1,1)), alpha
// tuning h = S1 + (σ1/σ2)·S2, mean removal and overlap-add with stride 1 (rPPG-Toolbox
// `POS_WANG.py`). The output is negated so that peaks mark systole (vitallens-python `pos.py`).

/** Pulse signal from uniformly sampled RGB channels at `sampleRateHz`. */
export function posPulse(r: ArrayLike<number>, g: ArrayLike<number>, b: ArrayLike<number>, sampleRateHz: number): Float64Array {
  const n = r.length;
  const l = Math.max(4, Math.ceil(1.6 * sampleRateHz));
  const out = new Float64Array(n);
  if (n < l) return out;
  const s1 = new Float64Array(l);
  const s2 = new Float64Array(l);
  for (let start = 0; start + l <= n; start++) {
    let mr = 0;
    let mg = 0;
    let mb = 0;
    for (let i = start; i < start + l; i++) {
      mr += r[i];
      mg += g[i];
      mb += b[i];
    }
    if (mr <= 0 || mg <= 0 || mb <= 0) continue;
    const ir = l / mr;
    const ig = l / mg;
    const ib = l / mb;
    let m1 = 0;
    let m2 = 0;
    for (let k = 0; k < l; k++) {
      const cr = r[start + k] * ir;
      const cg = g[start + k] * ig;
      const cb = b[start + k] * ib;
      s1[k] = cg - cb;
      s2[k] = -2 * cr + cg + cb;
      m1 += s1[k];
      m2 += s2[k];
    }
    m1 /= l;
    m2 /= l;
    let v1 = 0;
    let v2 = 0;
    for (let k = 0; k < l; k++) {
      v1 += (s1[k] - m1) * (s1[k] - m1);
      v2 += (s2[k] - m2) * (s2[k] - m2);
    }
    const alpha = v2 > 0 ? Math.sqrt(v1 / v2) : 0;
    let mh = 0;
    for (let k = 0; k < l; k++) {
      s1[k] = s1[k] - m1 + alpha * (s2[k] - m2);
      mh += s1[k];
    }
    mh /= l;
    for (let k = 0; k < l; k++) out[start + k] -= s1[k] - mh;
  }
  return out;
}
