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
const SCORE_FLOOR = 1e-4;

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
  // The transition penalty c·d·d per jump size d, computed once per step (the same products).
  if (penalty.length < maxJump + 1) penalty = new Float64Array(2 * (maxJump + 1));
  const pen = penalty;
  for (let d = 0; d <= maxJump; d++) pen[d] = c * d * d;
  for (let i = first; i <= last; i++) {
    let best = -Infinity;
    let arg = i;
    const a = Math.max(first, i - maxJump);
    const b = Math.min(last, i + maxJump);
    // Predecessors in ascending order, as one loop over j would visit them (ties keep the first).
    for (let j = a; j < i; j++) {
      const v = pd[j] - pen[i - j];
      if (v > best) {
        best = v;
        arg = j;
      }
    }
    for (let j = Math.max(a, i); j <= b; j++) {
      const v = pd[j] - pen[j - i];
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
