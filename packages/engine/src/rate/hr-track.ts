// Temporal tracking of the heart rate across windows: Viterbi decoding of the most likely rate
// path over the windows' score spectra with a Gaussian penalty on rate changes (as in spectral
// HR trackers for wearable PPG, e.g. Zhang, Pi & Liu, "TROIKA", IEEE TBME 62(2), 2015, spectral
// peak tracking; here the dynamic-programming form). The forward step alone is the online tracker
// used by the streaming estimator.
import type { HrWindow } from './hr-spectrum.js';

/** Standard deviation of the rate change between windows 1 s apart, bpm. */
export const HR_STEP_SIGMA_BPM = 4;
/** Largest rate change allowed between consecutive windows, bpm. */
export const HR_MAX_STEP_BPM = 15;
/** Floor added to a window's score before its log (the emission of a candidate without power). */
export const SCORE_FLOOR = 1e-4;

export interface ForwardState {
  lo: number;
  logDelta: Float64Array;
}

/** Candidate states a path may use (inclusive indices into a window's states); all when absent. */
export interface StateRange {
  from: number;
  to: number;
}

function emission(w: HrWindow, i: number, range?: StateRange): number {
  if (range && (i < range.from || i > range.to)) return -Infinity;
  return Math.log(w.score[i] + SCORE_FLOOR);
}

/** Transition penalties by jump size (scratch, rewritten by every step). */
let penalty = new Float64Array(64);

/**
 * One forward step: new log-likelihood vector given the previous one (or null at the start).
 * `into`: an array of w.states values (not prev's) to hold it instead of a new one.
 */
export function viterbiStep(
  prev: ForwardState | null,
  w: HrWindow,
  stepSec: number,
  back?: Int32Array,
  range?: StateRange,
  into?: Float64Array,
): ForwardState {
  const out = into && into.length === w.states && into !== prev?.logDelta ? into : new Float64Array(w.states);
  const binBpm = w.binHz * 60;
  const sigma = HR_STEP_SIGMA_BPM * Math.sqrt(Math.max(0.25, stepSec));
  const maxJump = Math.max(1, Math.round((HR_MAX_STEP_BPM * Math.max(1, stepSec)) / binBpm));
  const c = 1 / (2 * (sigma / binBpm) ** 2);
  if (!prev || prev.lo !== w.lo || prev.logDelta.length !== w.states) {
    for (let i = 0; i < w.states; i++) out[i] = emission(w, i, range);
    if (back) back.fill(-1);
    return { lo: w.lo, logDelta: out };
  }
  const pd = prev.logDelta;
  // States outside `range` are impossible (−∞): neither computed nor used as predecessors.
  const first = range ? Math.max(0, range.from) : 0;
  const last = range ? Math.min(w.states - 1, range.to) : w.states - 1;
  if (range) {
    out.fill(-Infinity);
    if (back) back.fill(-1);
  }
  // The transition penalty c·d·d per jump d in −maxJump..maxJump, computed once per step (the same
  // products; d·d does not depend on the sign of d).
  const span = 2 * maxJump + 1;
  if (penalty.length < span) penalty = new Float64Array(2 * span);
  const pen = penalty;
  for (let d = -maxJump; d <= maxJump; d++) pen[d + maxJump] = c * d * d;
  // Two states per pass over their predecessors (the shared pd[j] loaded once). Each state still
  // visits its own predecessors in ascending order with the same comparisons as a loop of its own,
  // so its maximum and its arg (ties keep the first) are those of that loop.
  let i = first;
  for (; i < last; i += 2) {
    let best0 = -Infinity;
    let arg0 = i;
    let best1 = -Infinity;
    let arg1 = i + 1;
    const off = maxJump - i; // pen index of predecessor j: j + off for state i, j + off − 1 for i + 1
    const a = Math.max(first, i - maxJump);
    const lo1 = Math.max(first, i + 1 - maxJump);
    const hi0 = Math.min(last, i + maxJump);
    const b = Math.min(last, i + 1 + maxJump);
    if (a < lo1) {
      best0 = pd[a] - pen[a + off];
      if (!(best0 > -Infinity)) best0 = -Infinity;
      else arg0 = a;
    }
    for (let j = lo1; j <= hi0; j++) {
      const p = pd[j];
      const v0 = p - pen[j + off];
      const v1 = p - pen[j + off - 1];
      if (v0 > best0) {
        best0 = v0;
        arg0 = j;
      }
      if (v1 > best1) {
        best1 = v1;
        arg1 = j;
      }
    }
    if (b > hi0) {
      const v1 = pd[b] - pen[b + off - 1];
      if (v1 > best1) {
        best1 = v1;
        arg1 = b;
      }
    }
    out[i] = best0 + emission(w, i, range);
    out[i + 1] = best1 + emission(w, i + 1, range);
    if (back) {
      back[i] = arg0;
      back[i + 1] = arg1;
    }
  }
  if (i === last) {
    let best = -Infinity;
    let arg = i;
    const off = maxJump - i;
    for (let j = Math.max(first, i - maxJump), b = Math.min(last, i + maxJump); j <= b; j++) {
      const v = pd[j] - pen[j + off];
      if (v > best) {
        best = v;
        arg = j;
      }
    }
    out[i] = best + emission(w, i, range);
    if (back) back[i] = arg;
  }
  // Normalise to avoid drift of the log values over long captures.
  let m = -Infinity;
  for (let i = 0; i < out.length; i++) if (out[i] > m) m = out[i];
  for (let i = 0; i < out.length; i++) out[i] -= m;
  return { lo: w.lo, logDelta: out };
}

export function argmax(x: ArrayLike<number>): number {
  let k = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[k]) k = i;
  return k;
}

/** Most likely state path (candidate indices) over all windows, optionally confined to `range`. */
export function viterbiPath(windows: HrWindow[], stepSec: number, range?: StateRange): Int32Array {
  const n = windows.length;
  const path = new Int32Array(n);
  if (n === 0) return path;
  const backs: Int32Array[] = [];
  let state: ForwardState | null = null;
  for (const w of windows) {
    const back = new Int32Array(w.states);
    state = viterbiStep(state, w, stepSec, back, range);
    backs.push(back);
  }
  path[n - 1] = argmax(state!.logDelta);
  for (let t = n - 1; t > 0; t--) {
    const b = backs[t][path[t]];
    path[t - 1] = b >= 0 ? b : path[t];
  }
  return path;
}
