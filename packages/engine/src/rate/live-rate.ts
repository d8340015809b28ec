// The live heart rate: the capture rate (capture-rate.ts) of the capture so far, kept online.
// Every live 10 s window adds its spectra to the running anchor (live-anchor.ts) and keeps, in a
// compact ring, what the capture rate's two steps read of it: its POS score as a quantised log
// emission and, per candidate bin, the POS peak refinement (refineRateHz's local maximum,
// interpolated) as a fraction of a bin. Each second the kept windows are Viterbi-decoded (the
// transitions of hr-track.ts) inside the ±15 bpm corridor around the anchor and the live rate is
// the mean of the tracked window rates, each weighted by the window's score at it: the offline
// capture rate's two steps on the same windows, so the live events converge on the final instead
// of following single windows. A single 10 s window's rate scatters by ±3–7 bpm around the
// capture's on a clean phantom (whose own 10 s rate moves by up to ±4 bpm); the mean of the
// tracked path does not.
//
// Memory: a window costs 4 bytes per candidate bin (~185 at the live 10 Hz analysis) plus one per
// corridor state for its back-pointer, ~0.8 KB, in arrays allocated once per session (~45 KB for
// the 60 windows); the full spectra it came from are not kept (they were ~4.8 KB a window).
import { CAPTURE_CORRIDOR_BPM } from './capture-rate.js';
import { scoreSpectra, type HrWindow } from './hr-spectrum.js';
import { HR_MAX_STEP_BPM, HR_STEP_SIGMA_BPM, SCORE_FLOOR } from './hr-track.js';
import { LiveAnchor } from './live-anchor.js';

/**
 * Windows the live rate averages (the most recent ones): 60 one-second steps, 70 s of capture.
 * Sessions are 60 s by default (limits.ts), so there the live rate is the capture rate so far; a
 * longer session's live rate follows its last 70 s, and the decoding cost stays bounded.
 */
export const LIVE_SPAN_WINDOWS = 60;

/**
 * Windows decoded before the first live event (from 14 s of capture): the first windows alone put
 * single events up to 7 bpm from a clean phantom's rate; five of them, re-decoded together, within 5.
 */
export const LIVE_MIN_WINDOWS = 5;

/** Emissions log(score + SCORE_FLOOR) lie in [log SCORE_FLOOR, 0]; kept as 16-bit steps of it. */
const LOG_FLOOR = Math.log(SCORE_FLOOR);
const EMIT_STEPS = 65535;
/** Refinement offsets (−2.5…2.5 bins) in steps of 1/50 bin (0.012 bpm at the live 10 Hz analysis). */
const REFINE_SCALE = 50;
/** A back-pointer that says "no predecessor" (first window of a decoding). */
const NO_BACK = 255;

export interface LiveRateEstimate {
  /** Score-weighted mean of the kept windows' tracked rates, bpm (NaN before the first window). */
  rateBpm: number;
  /** The newest window's tracked candidate (absolute bin index, as `HrWindow.lo + state`). */
  bin: number;
}

/** The candidate grid every kept window shares (the live analysis rate and FFT size fix it). */
interface Grid {
  lo: number;
  states: number;
  binHz: number;
}

export class LiveRate {
  private readonly anchor = new LiveAnchor();
  private grid: Grid | null = null;
  /** Ring of kept windows, `states` values each: quantised emission and refinement offset. */
  private emit = new Uint16Array(0);
  private refine = new Int8Array(0);
  /** Ring of back-pointers, `corridorMax` values each, relative to the corridor's first state. */
  private back = new Uint8Array(0);
  private corridorMax = 0;
  /** Kept windows and the ring index of the oldest. */
  private count = 0;
  private first = 0;
  /** Forward log-likelihoods over the corridor of the last decoding, and a spare of the same size. */
  private delta = new Float64Array(0);
  private spare = new Float64Array(0);
  private penalty = new Float64Array(0);
  private decodedFrom = -1;
  private decodedTo = -1;
  /** Windows added since the last decoding. */
  private pending = 0;
  /** Windows added so far (all of them, not only the kept ones). */
  windows = 0;

  constructor(
    private readonly stepSec = 1,
    private readonly span = LIVE_SPAN_WINDOWS,
  ) {}

  /** The running anchor may be the double of the rate and its evidence does not settle it (live-anchor.ts). */
  get doubtful(): boolean {
    return this.anchor.doubtful();
  }

  /** The capture-level evidence of the capture so far (live-anchor.ts `anchorShare`). */
  anchorShare(): number {
    return this.anchor.anchorShare();
  }

  /** Bytes held by the kept windows and the decoder (the live rate's memory, bounded by `span`). */
  get retainedBytes(): number {
    return (
      this.emit.byteLength +
      this.refine.byteLength +
      this.back.byteLength +
      this.delta.byteLength +
      this.spare.byteLength +
      this.penalty.byteLength +
      this.anchor.retainedBytes
    );
  }

  /** Adds one live window (nothing of it is referenced afterwards: the caller may overwrite it). */
  add(win: HrWindow, pos?: Float64Array, sampleRateHz?: number, texture?: Float64Array | null): void {
    this.anchor.add(win, pos, sampleRateHz, texture);
    this.windows++;
    // The capture rate tracks the POS pulse alone (capture-rate.ts), so its score is re-made from
    // the POS spectrum; the window's own score mixes in CHROM.
    const s = scoreSpectra([win.spectra[0]], win.noiseSpectrum, win.windowSec, win.band, scratchScore(win.states));
    const g = this.grid;
    if (!g || g.lo !== s.lo || g.states !== s.states || g.binHz !== s.binHz) this.reset(s);
    const slot = (this.first + this.count) % this.span;
    if (this.count < this.span) this.count++;
    else this.first = (this.first + 1) % this.span;
    this.pending++;
    const n = s.states;
    const e = this.emit;
    for (let i = 0; i < n; i++) {
      const v = Math.round(((Math.log(s.score[i] + SCORE_FLOOR) - LOG_FLOOR) / -LOG_FLOOR) * EMIT_STEPS);
      e[slot * n + i] = Math.min(EMIT_STEPS, Math.max(0, v));
    }
    refinements(win.spectra[0].power, s.lo, n, this.refine, slot * n);
  }

  /** Decodes the kept windows inside the corridor around the running anchor. */
  estimate(): LiveRateEstimate {
    const g = this.grid;
    if (!g || this.count === 0) return { rateBpm: NaN, bin: -1 };
    const { from, to } = this.corridor(g, this.anchor.anchorBpm());
    const c = to - from + 1;
    // While the corridor stays put, one forward step per new window; when it moves, the kept
    // windows are decoded again inside the new one. Past a full ring the forward vector still
    // carries the dropped windows' evidence (fixed-lag decoding), so a long session does not
    // decode 60 windows every second.
    const redo = from !== this.decodedFrom || to !== this.decodedTo;
    const start = redo ? 0 : this.count - Math.min(this.pending, this.count);
    for (let i = start; i < this.count; i++) this.step(g, from, c, i, redo && i === 0);
    this.decodedFrom = from;
    this.decodedTo = to;
    this.pending = 0;
    let k = 0;
    for (let j = 1; j < c; j++) if (this.delta[j] > this.delta[k]) k = j;
    const bin = g.lo + from + k;
    // Each tracked rate weighted by the window's score there (its share of the window's POS
    // score): a window whose pulse is lost in noise, tracked through the corridor at random, counts
    // for little. On the ubfc2 sessions this brought the live median closer to the final (25 s: 6
    // of 10 within 2 bpm against 5 with a plain mean); on the phantom it changes nothing measurable.
    const n = g.states;
    const binBpm = g.binHz * 60;
    let sum = 0;
    let wsum = 0;
    for (let i = this.count - 1; i >= 0; i--) {
      const slot = (this.first + i) % this.span;
      const state = from + k;
      const wt = Math.max(0, Math.exp(this.emission(slot * n + state)) - SCORE_FLOOR) + 1e-9;
      sum += wt * (g.lo + state + this.refine[slot * n + state] / REFINE_SCALE) * binBpm;
      wsum += wt;
      const b = this.back[slot * this.corridorMax + k];
      if (b !== NO_BACK) k = b;
    }
    return { rateBpm: sum / wsum, bin };
  }

  /** A new candidate grid (the first window, or the analysis rate changed): the ring starts empty. */
  private reset(s: Grid): void {
    this.grid = { lo: s.lo, states: s.states, binHz: s.binHz };
    const half = Math.round(CAPTURE_CORRIDOR_BPM / (s.binHz * 60));
    this.corridorMax = Math.min(s.states, 2 * half + 1);
    this.emit = new Uint16Array(this.span * s.states);
    this.refine = new Int8Array(this.span * s.states);
    this.back = new Uint8Array(this.span * this.corridorMax);
    // The transition penalty c·d² per jump d of −maxJump…maxJump bins (viterbiStep's).
    const binBpm = s.binHz * 60;
    const sigma = HR_STEP_SIGMA_BPM * Math.sqrt(Math.max(0.25, this.stepSec));
    const maxJump = Math.max(1, Math.round((HR_MAX_STEP_BPM * Math.max(1, this.stepSec)) / binBpm));
    const c = 1 / (2 * (sigma / binBpm) ** 2);
    this.penalty = Float64Array.from({ length: 2 * maxJump + 1 }, (_, i) => c * (i - maxJump) ** 2);
    this.delta = new Float64Array(this.corridorMax);
    this.spare = new Float64Array(this.corridorMax);
    this.count = 0;
    this.first = 0;
    this.decodedFrom = -1;
    this.decodedTo = -1;
    this.pending = 0;
  }

  private emission(at: number): number {
    return LOG_FLOOR - (LOG_FLOOR * this.emit[at]) / EMIT_STEPS;
  }

  /**
   * The anchor's ±15 bpm corridor in the grid's states (as captureHeartRate's); all states (up to
   * the ring's corridor width, centred) without an anchor.
   */
  private corridor(g: Grid, anchorBpm: number): { from: number; to: number } {
    const binBpm = g.binHz * 60;
    const half = (this.corridorMax - 1) >> 1;
    let centre = Number.isFinite(anchorBpm) ? Math.round(anchorBpm / binBpm) - g.lo : g.states >> 1;
    centre = Math.min(Math.max(centre, 0), g.states - 1);
    const from = Math.max(0, centre - half);
    return { from, to: Math.min(g.states - 1, centre + half) };
  }

  /**
   * One forward Viterbi step of kept window i over corridor states from…from+c−1: hr-track.ts's
   * viterbiStep (Gaussian penalty on the rate change, HR_STEP_SIGMA_BPM per √step, at most
   * HR_MAX_STEP_BPM; ties keep the lowest predecessor) on the compact window.
   */
  private step(g: Grid, from: number, c: number, i: number, restart: boolean): void {
    const slot = (this.first + i) % this.span;
    const at = slot * g.states + from;
    const back = this.back;
    const bAt = slot * this.corridorMax;
    const out = this.spare;
    if (restart) {
      for (let j = 0; j < c; j++) out[j] = this.emission(at + j);
      back.fill(NO_BACK, bAt, bAt + c);
    } else {
      const pen = this.penalty;
      const maxJump = (pen.length - 1) >> 1;
      const pd = this.delta;
      for (let j = 0; j < c; j++) {
        let best = -Infinity;
        let arg = j;
        for (let p = Math.max(0, j - maxJump), b = Math.min(c - 1, j + maxJump); p <= b; p++) {
          const v = pd[p] - pen[p - j + maxJump];
          if (v > best) {
            best = v;
            arg = p;
          }
        }
        out[j] = best + this.emission(at + j);
        back[bAt + j] = arg;
      }
    }
    let m = -Infinity;
    for (let j = 0; j < c; j++) if (out[j] > m) m = out[j];
    for (let j = 0; j < c; j++) out[j] -= m;
    this.spare = this.delta;
    this.delta = out;
  }
}

/** Score scratch shared by every session (the live analyses run one at a time on a thread). */
let scoreScratch = new Float64Array(0);
function scratchScore(n: number): Float64Array {
  if (scoreScratch.length !== n) scoreScratch = new Float64Array(n);
  return scoreScratch;
}

let logScratch = new Float64Array(0);

/**
 * refineRateHz on the POS spectrum alone, for every candidate bin k of lo…lo+n−1: the local
 * maximum within k ± 2, interpolated (interpolatePeakBin's log-parabola, each bin's log taken once);
 * written as its offset from k in 1/REFINE_SCALE bins at into[at + k − lo].
 */
function refinements(power: Float64Array, lo: number, n: number, into: Int8Array, at: number): void {
  // Logs of bins lo − 3 … lo + n + 2 (the maxima's neighbours); bins outside the spectrum are never read.
  if (logScratch.length < n + 6) logScratch = new Float64Array(n + 6);
  const lg = logScratch;
  for (let j = Math.max(0, lo - 3); j <= Math.min(power.length - 1, lo + n + 2); j++)
    lg[j - lo + 3] = Math.log(power[j] + 1e-300);
  for (let i = 0; i < n; i++) {
    const k = lo + i;
    let kk = k;
    for (let j = Math.max(1, k - 2); j <= Math.min(power.length - 2, k + 2); j++) if (power[j] > power[kk]) kk = j;
    let peak = kk;
    if (kk > 0 && kk < power.length - 1) {
      const a = lg[kk - 1 - lo + 3];
      const b = lg[kk - lo + 3];
      const c = lg[kk + 1 - lo + 3];
      const den = a - 2 * b + c;
      if (den < 0) peak = kk + Math.max(-0.5, Math.min(0.5, (0.5 * (a - c)) / den));
    }
    into[at + i] = Math.round((peak - k) * REFINE_SCALE);
  }
}
