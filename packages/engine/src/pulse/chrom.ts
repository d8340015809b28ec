// CHROM: de Haan & Jeanne, "Robust pulse rate from chrominance-based rPPG", IEEE TBME 60(10),
// 2013. Channels normalised by their local mean, X = 3R − 2G and Y = 1.5R + G − 1.5B, both
// band-passed, then per half-overlapping Hann window (~1.6 s) S = Xf − (σXf/σYf)·Yf, overlap-added
// (rPPG-Toolbox `CHROME_DEHAAN.py`). We band-pass X and Y once over the whole trace instead of per
// window (cheaper, no per-window edge transients). Negated so that peaks mark systole.
import { bandPassZeroPhase } from '../dsp/butterworth.js';

/** Centred moving average of length `len` (shrinks at the edges). */
export function movingAverage(x: ArrayLike<number>, len: number): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  const cs = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) cs[i + 1] = cs[i] + x[i];
  const half = len >> 1;
  for (let i = 0; i < n; i++) {
    const a = Math.max(0, i - half);
    const b = Math.min(n, i + half + 1);
    out[i] = (cs[b] - cs[a]) / (b - a);
  }
  return out;
}

export function chromPulse(
  r: ArrayLike<number>,
  g: ArrayLike<number>,
  b: ArrayLike<number>,
  sampleRateHz: number,
  band: { lowHz: number; highHz: number } = { lowHz: 0.6, highHz: 4 },
): Float64Array {
  const n = r.length;
  let l = Math.ceil(1.6 * sampleRateHz);
  if (l % 2) l++;
  const out = new Float64Array(n);
  if (n < l) return out;
  const norm = Math.max(3, l);
  const mr = movingAverage(r, norm);
  const mg = movingAverage(g, norm);
  const mb = movingAverage(b, norm);
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const cr = mr[i] > 0 ? r[i] / mr[i] : 1;
    const cg = mg[i] > 0 ? g[i] / mg[i] : 1;
    const cb = mb[i] > 0 ? b[i] / mb[i] : 1;
    x[i] = 3 * cr - 2 * cg;
    y[i] = 1.5 * cr + cg - 1.5 * cb;
  }
  const xf = bandPassZeroPhase(x, sampleRateHz, band.lowHz, band.highHz);
  const yf = bandPassZeroPhase(y, sampleRateHz, band.lowHz, band.highHz);
  const half = l / 2;
  const hann = new Float64Array(l);
  for (let k = 0; k < l; k++) hann[k] = 0.5 - 0.5 * Math.cos((2 * Math.PI * k) / l);
  for (let start = 0; start + l <= n + half; start += half) {
    const end = Math.min(n, start + l);
    let sx = 0;
    let sy = 0;
    let mx = 0;
    let my = 0;
    const len = end - start;
    for (let i = start; i < end; i++) {
      mx += xf[i];
      my += yf[i];
    }
    mx /= len;
    my /= len;
    for (let i = start; i < end; i++) {
      sx += (xf[i] - mx) * (xf[i] - mx);
      sy += (yf[i] - my) * (yf[i] - my);
    }
    const alpha = sy > 0 ? Math.sqrt(sx / sy) : 0;
    for (let i = start; i < end; i++) out[i] -= (xf[i] - alpha * yf[i]) * hann[i - start];
    if (end === n) break;
  }
  return out;
}
