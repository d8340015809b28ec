// The windowed least-squares regression behind background-referenced artifact rejection
// (background-reference.ts; Li et al., "Remote heart rate measurement from face videos under
// realistic situations", CVPR 2014, rectify the face trace with the background trace by an adaptive
// filter; here a windowed least-squares fit with chance-level shrinkage and a ridge term).
import { bandLimitedChannel, type Channels, type PulseBand } from './pulse-signals.js';
import { scratchSlots, type BufferPool } from '../dsp/buffers.js';
import { hannWindow } from '../dsp/spectrum.js';

const WINDOW_SEC = 10;
/** Ridge term relative to the background's own energy: a flat background yields no correction. */
const RIDGE = 1e-3;

/**
 * Scratch slots (dsp/buffers.ts): 0–2 the band-limited skin, 3 the overlap-add weights, 4 one
 * window's fit, 5 the small normal equations.
 */
const grow = scratchSlots();

/** A fresh array, or the pool's array for `name` (zeroed) when there is a pool. */
function zeros(pool: BufferPool | undefined, name: string, n: number): Float64Array {
  return pool ? pool.get(name, n).fill(0) : new Float64Array(n);
}

/**
 * The R² that q references unrelated to the skin trace reach or exceed with probability `p` in a
 * window of `dof` independent samples: the upper p-quantile of R²'s null distribution,
 * Beta(q/2, (dof − q)/2) (least squares on Gaussian noise; the F-test of a regression). By midpoint
 * integration of the density on a fine grid (dof here is 10–200, so the density is smooth on it).
 */
export function chanceR2Quantile(q: number, dof: number, p: number): number {
  // A live session asks with the same (q, dof, p) at every slow analysis: computed once each.
  const key = `${q}:${dof}:${p}`;
  let v = quantiles.get(key);
  if (v === undefined) {
    // Bounded: dof follows from frame rates and window lengths, a few in practice.
    if (quantiles.size >= 256) quantiles.clear();
    v = betaUpperQuantile(q, dof, p);
    quantiles.set(key, v);
  }
  return v;
}

const quantiles = new Map<string, number>();

function betaUpperQuantile(q: number, dof: number, p: number): number {
  const a = q / 2;
  const b = Math.max(0.5, (dof - q) / 2);
  const steps = 20000;
  const dens = new Float64Array(steps);
  let total = 0;
  for (let k = 0; k < steps; k++) {
    const x = (k + 0.5) / steps;
    dens[k] = Math.exp((a - 1) * Math.log(x) + (b - 1) * Math.log1p(-x));
    total += dens[k];
  }
  let tail = 0;
  for (let k = steps - 1; k >= 0; k--) {
    tail += dens[k];
    if (tail >= p * total) return k / steps;
  }
  return 0;
}

export interface RejectOptions {
  /**
   * Remove a window's fit only when its R² is significant at this level (chanceR2Quantile): chance
   * fits are then left in place instead of shrunk. Unset: every fit above the chance share is
   * removed, shrunk (the heart-rate path).
   */
  significance?: number;
}

/**
 * Windowed least-squares rejection of any number of reference signals (band-limited, zero mean:
 * the three background channels, the corners' texture energy) from the band-limited skin channels:
 * 10 s Hann windows with half overlap, overlap-added. Band-limited signals have few independent
 * samples (≈ 2 × bandwidth × duration), so q regressors explain a share q/dof of any skin trace by
 * chance alone; each fit is shrunk by max(0, 1 − chance/R²): a chance fit removes nothing, a real
 * shared artifact almost all of it. A ridge term relative to the references' energy keeps a flat
 * reference from producing a correction.
 *
 * A chance fit above the chance share (R² scatters around it: its SD is about √(2q)/dof, 0.07 for
 * four references over 10 s at 42–150 bpm) is still partly removed, and what it removes is the
 * reference's noise waveform scaled to the pulse: it reshapes the pulse by an amount that does not
 * shrink as the pulse grows. The heart rate does not notice; beat timing does (on a phantom whose
 * background holds sensor noise only, RMSSD 13–14 ms too high at a 3–4 % pulse). With
 * `opts.significance` only significant fits are removed (the beat-timing pulse, docs/engine.md).
 */
export function rejectReferences(
  skin: Channels,
  refs: Float64Array[],
  sampleRateHz: number,
  band: PulseBand,
  pool?: BufferPool,
  opts: RejectOptions = {},
): Channels {
  const n = skin.r.length;
  // The band-limited channels minus one (their zero-mean fluctuation), as computed in two steps.
  const s = [skin.r, skin.g, skin.b].map((c, k) => bandLimitedChannel(c, sampleRateHz, band, grow(k, n), true));
  const q = refs.length;
  const len = Math.min(n, Math.round(WINDOW_SEC * sampleRateHz));
  if (len < 8 || q === 0) return { r: s[0].map((v) => v + 1), g: s[1].map((v) => v + 1), b: s[2].map((v) => v + 1) };
  const out = [zeros(pool, 'rejectR', n), zeros(pool, 'rejectG', n), zeros(pool, 'rejectB', n)];
  const wsum = grow(3, n).fill(0, 0, n);
  const step = Math.max(1, len >> 1);
  const starts: number[] = [];
  for (let st = 0; st + len <= n; st += step) starts.push(st);
  if (starts[starts.length - 1] + len < n) starts.push(n - len);
  const dof = Math.max(2 * q, 2 * (band.highHz - band.lowHz) * (len / sampleRateHz));
  const chance = q / dof;
  const minR2 = opts.significance === undefined ? chance : chanceR2Quantile(q, dof, opts.significance);
  const fit = grow(4, len);
  const hann = hannWindow(len);
  // Normal equations: xtx (q·q), then xty for the three channels (3·q), then solveN's q·(q+1) + q.
  const small = grow(5, q * q + 3 * q + q * (q + 1) + q);
  const xtx = small.subarray(0, q * q);
  const xty = [0, 1, 2].map((c) => small.subarray(q * q + c * q, q * q + (c + 1) * q));
  const solveWork = small.subarray(q * q + 3 * q);
  const solution = solveWork.subarray(q * (q + 1), q * (q + 1) + q);
  for (const st of starts) {
    const end = st + len;
    for (let a = 0; a < q; a++) {
      // refs[a] against refs[a..q) and the three skin channels: each dot product is summed over i
      // in order as before, up to four at a time in one loop (independent sums run in parallel).
      const xa = refs[a];
      const partners = q - a + 3;
      for (let p0 = 0; p0 < partners; p0 += 4) {
        const pa = partner(refs, s, a, p0, partners);
        const pb = partner(refs, s, a, p0 + 1, partners);
        const pc = partner(refs, s, a, p0 + 2, partners);
        const pd = partner(refs, s, a, p0 + 3, partners);
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        for (let i = st; i < end; i++) {
          const x = xa[i];
          s0 += x * pa[i];
          s1 += x * pb[i];
          s2 += x * pc[i];
          s3 += x * pd[i];
        }
        // The four sums stored in turn (no array of them per window).
        store(xtx, small, q, a, p0, partners, s0);
        store(xtx, small, q, a, p0 + 1, partners, s1);
        store(xtx, small, q, a, p0 + 2, partners, s2);
        store(xtx, small, q, a, p0 + 3, partners, s3);
      }
    }
    let trace = 0;
    for (let a = 0; a < q; a++) trace += xtx[a * q + a];
    const ridge = RIDGE * trace + 1e-15;
    for (let a = 0; a < q; a++) xtx[a * q + a] += ridge;
    for (let c = 0; c < 3; c++) {
      const beta = solveN(xtx, xty[c], q, solveWork, solution);
      const sc = s[c];
      fitWindow(fit, refs, beta, st, end);
      let ss = 0;
      let fitSs = 0;
      for (let i = st; i < end; i++) {
        const f = fit[i - st];
        ss += sc[i] * sc[i];
        fitSs += f * f;
      }
      const r2 = ss > 0 ? Math.min(1, fitSs / ss) : 0;
      const shrink = r2 > minR2 && r2 > chance ? 1 - chance / r2 : 0;
      const o = out[c];
      for (let i = st; i < end; i++) {
        const w = hann[i - st];
        if (c === 0) wsum[i] += w;
        o[i] += w * (sc[i] - shrink * fit[i - st]);
      }
    }
  }
  for (let c = 0; c < 3; c++) {
    const o = out[c];
    const sc = s[c];
    for (let i = 0; i < n; i++) o[i] = (wsum[i] > 1e-9 ? o[i] / wsum[i] : sc[i]) + 1;
  }
  return { r: out[0], g: out[1], b: out[2] };
}

/**
 * fit[i − st] = Σ_a beta[a]·refs[a][i] for i in [st, end), the terms added in order of a starting
 * from 0 (as a per-sample loop over a would); three and four references in one pass.
 */
function fitWindow(fit: Float64Array, refs: Float64Array[], beta: Float64Array, st: number, end: number): void {
  const q = refs.length;
  const x0 = refs[0];
  const b0 = beta[0];
  if (q === 3 || q === 4) {
    const x1 = refs[1];
    const x2 = refs[2];
    const b1 = beta[1];
    const b2 = beta[2];
    if (q === 3) {
      for (let i = st; i < end; i++) fit[i - st] = 0 + b0 * x0[i] + b1 * x1[i] + b2 * x2[i];
    } else {
      const x3 = refs[3];
      const b3 = beta[3];
      for (let i = st; i < end; i++) fit[i - st] = 0 + b0 * x0[i] + b1 * x1[i] + b2 * x2[i] + b3 * x3[i];
    }
    return;
  }
  for (let i = st; i < end; i++) fit[i - st] = 0 + b0 * x0[i];
  for (let a = 1; a < q; a++) {
    const xa = refs[a];
    const ba = beta[a];
    for (let i = st; i < end; i++) fit[i - st] += ba * xa[i];
  }
}

/**
 * Stores sum p (p < partners) of reference a: into xtx (both triangles) for p < q − a, else into the
 * x'y block of the skin channel p − (q − a) (small[q·q + c·q + a]). Past the last partner: nothing.
 */
function store(
  xtx: Float64Array,
  small: Float64Array,
  q: number,
  a: number,
  p: number,
  partners: number,
  sum: number,
): void {
  if (p >= partners) return;
  if (p < q - a) {
    xtx[a * q + a + p] = sum;
    xtx[(a + p) * q + a] = sum;
  } else {
    small[q * q + (p - (q - a)) * q + a] = sum;
  }
}

/**
 * Partner p of reference a in the normal equations: refs[a + p] for p < q − a, then the skin
 * channels; past the last partner, refs[a] again (a dummy sum, discarded).
 */
function partner(refs: Float64Array[], s: Float64Array[], a: number, p: number, partners: number): Float64Array {
  if (p >= partners) return refs[a];
  const q = refs.length;
  return p < q - a ? refs[a + p] : s[p - (q - a)];
}

/**
 * Solves the q×q system A x = y (A row-major, not modified); zeros when singular. `work` holds at
 * least q·(q+1) + q values, the augmented matrix first; `x` is the view of its last q values the
 * solution is written to (made once per call of rejectReferences, not per solve).
 */
function solveN(a: Float64Array, y: Float64Array, q: number, work: Float64Array, x: Float64Array): Float64Array {
  const m = work;
  for (let r = 0; r < q; r++) {
    for (let c = 0; c < q; c++) m[r * (q + 1) + c] = a[r * q + c];
    m[r * (q + 1) + q] = y[r];
  }
  const w = q + 1;
  for (let c = 0; c < q; c++) {
    let p = c;
    for (let r = c + 1; r < q; r++) if (Math.abs(m[r * w + c]) > Math.abs(m[p * w + c])) p = r;
    if (Math.abs(m[p * w + c]) < 1e-18) return x.fill(0);
    if (p !== c)
      for (let k = 0; k < w; k++) {
        const t = m[c * w + k];
        m[c * w + k] = m[p * w + k];
        m[p * w + k] = t;
      }
    for (let r = 0; r < q; r++) {
      if (r === c) continue;
      const f = m[r * w + c] / m[c * w + c];
      if (f === 0) continue;
      for (let k = c; k < w; k++) m[r * w + k] -= f * m[c * w + k];
    }
  }
  for (let r = 0; r < q; r++) x[r] = m[r * w + q] / m[r * w + r];
  return x;
}
