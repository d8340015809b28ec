// The live heart rate: the capture rate (capture-rate.ts) of the capture so far, kept online.
// Every live 10 s window adds its spectra to the running anchor (live-anchor.ts) and keeps its POS
// score and POS spectrum; each second the kept windows are Viterbi-decoded (hr-track.ts) inside
// the ±15 bpm corridor around the anchor and the live rate is the mean of the tracked window rates,
// each refined on its POS spectrum and weighted by the window's score at it: the offline capture
// rate's two steps on the same windows, so the live events converge on the final instead of
// following single windows. A single 10 s window's rate scatters by ±3–7 bpm around the capture's
// on a clean phantom (whose own 10 s rate moves by up to ±4 bpm); the mean of the tracked path
// does not.
import { interpolatePeakBin } from '../dsp/spectrum.js';
import { CAPTURE_CORRIDOR_BPM } from './capture-rate.js';
import { scoreSpectra, type HrWindow } from './hr-spectrum.js';
import { argmax, viterbiStep, type ForwardState, type StateRange } from './hr-track.js';
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

/** Bins kept on each side of the candidate range for the peak refinement (refineRateHz's ±2, +1). */
const MARGIN = 3;

/** One kept window: the fields the tracker reads, its POS score and its POS power near the band. */
interface Kept extends HrWindow {
  back: Int32Array;
  /** POS power of bins lo − MARGIN … lo + states − 1 + MARGIN. */
  pos: Float64Array;
}

export interface LiveRateEstimate {
  /** Score-weighted mean of the kept windows' tracked rates, bpm (NaN before the first window). */
  rateBpm: number;
  /** The newest window's tracked candidate (absolute bin index, as `HrWindow.lo + state`). */
  bin: number;
}

export class LiveRate {
  private readonly anchor = new LiveAnchor();
  private readonly kept: Kept[] = [];
  /** Index in `kept` of the oldest window once the ring is full. */
  private next = 0;
  private readonly spare: [Float64Array, Float64Array] = [new Float64Array(0), new Float64Array(0)];
  /** Windows added so far (all of them, not only the kept ones). */
  windows = 0;
  /** Windows added since the last decoding, and the forward vector and anchor of that decoding. */
  private pending = 0;
  private forward: ForwardState | null = null;
  private decodedAnchor = NaN;

  constructor(
    private readonly stepSec = 1,
    private readonly span = LIVE_SPAN_WINDOWS,
  ) {}

  /** Adds one live window (what it needs is copied: the caller may overwrite the window afterwards). */
  add(win: HrWindow): void {
    this.anchor.add(win);
    this.windows++;
    this.pending++;
    let k: Kept;
    if (this.kept.length < this.span) {
      k = {
        ...win,
        score: new Float64Array(0),
        spectra: [],
        noiseSpectrum: null,
        weights: [],
        back: new Int32Array(0),
        pos: new Float64Array(0),
      };
      this.kept.push(k);
    } else {
      k = this.kept[this.next];
      this.next = (this.next + 1) % this.span;
    }
    // The capture rate tracks the POS pulse alone (capture-rate.ts), so its score is re-made from
    // the POS spectrum; the window's own score mixes in CHROM.
    const s = scoreSpectra(
      [win.spectra[0]],
      win.noiseSpectrum,
      win.windowSec,
      win.band,
      k.score.length === win.states ? k.score : undefined,
    );
    Object.assign(k, { lo: s.lo, states: s.states, binHz: s.binHz, score: s.score, windowSec: s.windowSec });
    if (k.back.length !== s.states) k.back = new Int32Array(s.states);
    if (k.pos.length !== s.states + 2 * MARGIN) k.pos = new Float64Array(s.states + 2 * MARGIN);
    const p = win.spectra[0].power;
    for (let i = 0; i < k.pos.length; i++) {
      const j = s.lo - MARGIN + i;
      k.pos[i] = j >= 0 && j < p.length ? p[j] : 0;
    }
  }

  /** Decodes the kept windows inside the corridor around the running anchor. */
  estimate(): LiveRateEstimate {
    const n = this.kept.length;
    if (n === 0) return { rateBpm: NaN, bin: -1 };
    const anchorBpm = this.anchor.anchorBpm();
    // While the anchor (a whole bpm) stays put, one forward step per new window; when it moves, the
    // kept windows are decoded again inside the new corridor. Past a full ring the forward vector
    // still carries the dropped windows' evidence (fixed-lag decoding), so a long session does not
    // decode 60 windows every second.
    const redo = anchorBpm !== this.decodedAnchor || this.forward === null;
    const from = redo ? 0 : Math.max(0, n - this.pending);
    let state = redo ? null : this.forward;
    for (let i = from; i < n; i++) {
      const w = this.at(i);
      state = viterbiStep(state, w, this.stepSec, w.back, this.corridor(w, anchorBpm), this.spareFor(w.states, state));
    }
    this.forward = state;
    this.decodedAnchor = anchorBpm;
    this.pending = 0;
    let k = argmax(state!.logDelta);
    const bin = this.at(n - 1).lo + k;
    // Each tracked rate weighted by the window's score there (its share of the window's POS
    // score): a window whose pulse is lost in noise, tracked through the corridor at random, counts
    // for little. On the ubfc2 sessions this brought the live median closer to the final (25 s: 6
    // of 10 within 2 bpm against 5 with a plain mean); on the phantom it changes nothing measurable.
    let sum = 0;
    let wsum = 0;
    for (let i = n - 1; i >= 0; i--) {
      const w = this.at(i);
      k = Math.min(Math.max(k, 0), w.states - 1);
      const wt = w.score[k] + 1e-9;
      sum += wt * refinedBpm(w, k);
      wsum += wt;
      const b = w.back[k];
      if (b >= 0) k = b;
    }
    return { rateBpm: sum / wsum, bin };
  }

  private at(i: number): Kept {
    return this.kept[(this.next + i) % this.kept.length];
  }

  /** The anchor's ±15 bpm corridor in w's states (as captureHeartRate's); all states without an anchor. */
  private corridor(w: Kept, anchorBpm: number): StateRange | undefined {
    if (!Number.isFinite(anchorBpm)) return undefined;
    const binBpm = w.binHz * 60;
    const centre = Math.round(anchorBpm / binBpm) - w.lo;
    const half = Math.round(CAPTURE_CORRIDOR_BPM / binBpm);
    const from = Math.max(0, centre - half);
    const to = Math.min(w.states - 1, centre + half);
    return from <= to ? { from, to } : undefined;
  }

  /** One of two alternating vectors of `states` values that is not `prev`'s (viterbiStep's `into`). */
  private spareFor(states: number, prev: ForwardState | null): Float64Array {
    const pick = prev?.logDelta === this.spare[0] ? 1 : 0;
    if (this.spare[pick].length !== states) this.spare[pick] = new Float64Array(states);
    return this.spare[pick];
  }
}

/** refineRateHz on the POS spectrum alone: the local maximum within ±2 bins, interpolated; bpm. */
function refinedBpm(w: Kept, state: number): number {
  let kk = state + MARGIN;
  for (let j = kk - 2; j <= kk + 2; j++) if (w.pos[j] > w.pos[kk]) kk = j;
  return (w.lo - MARGIN + interpolatePeakBin(w.pos, kk)) * w.binHz * 60;
}
