// CHROM: de Haan & Jeanne, "Robust pulse rate from chrominance-based rPPG", IEEE TBME 60(10),
// 2013. Channels normalised by their local mean, X = 3R − 2G and Y = 1.5R + G − 1.5B, both
// band-passed, then per half-overlapping Hann window (~1.6 s) S = Xf − (σXf/σYf)·Yf, overlap-added
// (rPPG-Toolbox `CHROME_DEHAAN.py`). We band-pass X and Y once over the whole trace instead of per
// window (cheaper, no per-window edge transients). Negated so that peaks mark systole.
import { bandPassPadded, zeroPhaseBuffer, zeroPhasePad } from '../dsp/butterworth.js';

/** Prefix sums for movingAverageInto (scratch: synchronous, never returned). */
let prefix = new Float64Array(1024);

/** Centred moving average of length `len` (shrinks at the edges). */
export function movingAverage(x: ArrayLike<number>, len: number): Float64Array {
  return movingAverageInto(x, len, new Float64Array(x.length));
}

/** movingAverage into `out` (length ≥ x.length; must not be `x`); returns `out`. */
export function movingAverageInto(x: ArrayLike<number>, len: number, out: Float64Array): Float64Array {
  const n = x.length;
  if (prefix.length < n + 1) prefix = new Float64Array(Math.max(n + 1, 2 * prefix.length));
  const cs = prefix;
  cs[0] = 0;
  for (let i = 0; i < n; i++) cs[i + 1] = cs[i] + x[i];
  const half = len >> 1;
  for (let i = 0; i < n; i++) {
    const a = Math.max(0, i - half);
    const b = Math.min(n, i + half + 1);
    out[i] = (cs[b] - cs[a]) / (b - a);
  }
  return out;
}

/** Hann taper of length l as the windows below use it (computed once per l). */
const tapers = new Map<number, Float64Array>();

function taper(l: number): Float64Array {
  let h = tapers.get(l);
  if (!h) {
    h = new Float64Array(l);
    for (let k = 0; k < l; k++) h[k] = 0.5 - 0.5 * Math.cos((2 * Math.PI * k) / l);
    if (tapers.size >= 64) tapers.clear();
    tapers.set(l, h);
  }
  return h;
}

/** Working arrays of chromPulse (scratch: synchronous, never returned). */
let work = new Float64Array(0);

/** The CHROM pulse of uniformly sampled RGB (into `out` when given: length r.length). */
export function chromPulse(
  r: ArrayLike<number>,
  g: ArrayLike<number>,
  b: ArrayLike<number>,
  sampleRateHz: number,
  band: { lowHz: number; highHz: number } = { lowHz: 0.6, highHz: 4 },
  out: Float64Array = new Float64Array(r.length),
): Float64Array {
  const n = r.length;
  let l = Math.ceil(1.6 * sampleRateHz);
  if (l % 2) l++;
  out.fill(0);
  if (n < l) return out;
  const norm = Math.max(3, l);
  if (work.length < 3 * n) work = new Float64Array(Math.max(3 * n, 2 * work.length));
  const mr = movingAverageInto(r, norm, work.subarray(0, n));
  const mg = movingAverageInto(g, norm, work.subarray(n, 2 * n));
  const mb = movingAverageInto(b, norm, work.subarray(2 * n, 3 * n));
  // X and Y are written straight into the two padded buffers of the zero-phase band-pass and
  // filtered there (the same values as filtering copies of them).
  const pad = zeroPhasePad(n, sampleRateHz);
  const xb = zeroPhaseBuffer(n + 2 * pad, 1);
  const yb = zeroPhaseBuffer(n + 2 * pad, 0);
  for (let i = 0; i < n; i++) {
    const cr = mr[i] > 0 ? r[i] / mr[i] : 1;
    const cg = mg[i] > 0 ? g[i] / mg[i] : 1;
    const cb = mb[i] > 0 ? b[i] / mb[i] : 1;
    xb[pad + i] = 3 * cr - 2 * cg;
    yb[pad + i] = 1.5 * cr + cg - 1.5 * cb;
  }
  bandPassPadded(xb, n, pad, sampleRateHz, band.lowHz, band.highHz);
  bandPassPadded(yb, n, pad, sampleRateHz, band.lowHz, band.highHz);
  const xf = xb.subarray(pad, pad + n);
  const yf = yb.subarray(pad, pad + n);
  const half = l / 2;
  const hann = taper(l);
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
