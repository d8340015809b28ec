// The capture-rate anchor (capture-rate.ts) kept online for the streaming estimator: every live
// 10 s window adds its normalised in-band POS periodogram, and its background reference's, to
// running sums on a grid of whole beats per minute (live windows are resampled at slightly
// different rates, so their bins do not line up exactly). The anchor is the peak of the pulse sum
// divided by (1 + K·ref/max ref), as offline: the averaging of Welch's method (IEEE Trans. Audio
// Electroacoust. 15(2), 1967) over the windows so far. A live rate far from it is a noise peak
// that one window's SQI let through (codec pumping near 1 Hz on low-bitrate video, in ubfc2).
// The offline period-doubling test (capture-rate.ts `periodDoubling`) is kept online too: each
// window given its POS pulse adds, at every other grid rate whose half is in the band, the coupling
// of that rate's half and the rate over the window's central three periods of the half, and the
// autocorrelation gain at twice the period over the window (~1 ms over a 60 s, 30 fps session).
// The anchor moves to the half of its peak when both, pooled over the rates within
// PERIOD_REACH_BPM of the peak, pass the offline thresholds after PERIOD_MIN_WINDOWS windows; while
// the two are phase-locked but the gain falls just short, the anchor is `doubtful` and the live
// rate sends no event.
import {
  addCoupling,
  ANCHOR_SHARE_HALF_WIDTH_HZ,
  CAPTURE_REFERENCE_PENALTY,
  coupling,
  lagCorrelation,
  PERIOD_DOUBLING_AC_GAIN,
  PERIOD_DOUBLING_COUPLING,
} from './capture-rate.js';
import type { HrWindow } from './hr-spectrum.js';

const GRID_MIN_BPM = 20;
const GRID_BINS = 240;
/** The verdict pools the evidence of the grid rates within this of the running peak. */
const PERIOD_REACH_BPM = 5;
/** Every this many grid rates (bpm) gathers period-doubling evidence from each window. */
const PERIOD_STRIDE_BPM = 2;
/**
 * How far below PERIOD_DOUBLING_AC_GAIN a phase-locked peak's gain still makes it doubtful (no
 * live event).
 */
const PERIOD_DOUBT_AC_GAIN = 0.15;
/** Windows of evidence (at one grid rate near the peak) before the anchor may move to its half. */
const PERIOD_MIN_WINDOWS = 5;

export class LiveAnchor {
  private readonly pulse = new Float64Array(GRID_BINS);
  private readonly ref = new Float64Array(GRID_BINS);
  /** The crop texture's normalised in-band periodogram, summed (the final's second reference). */
  private readonly tex = new Float64Array(GRID_BINS);
  /** Per grid rate: coupling sums (Re, Im, norm), summed autocorrelation gain, windows counted. */
  private readonly period = new Float64Array(GRID_BINS * 5);
  private readonly acc = new Float64Array(3);
  private windows = 0;
  private lowBpm = NaN;

  /** Bytes held (fixed grids). */
  get retainedBytes(): number {
    return this.pulse.byteLength + this.ref.byteLength + this.tex.byteLength + this.period.byteLength;
  }

  /**
   * Adds one live window (POS is the window's first spectrum); with the window's POS pulse and its
   * sampling rate, also the period-doubling evidence around the running peak; with the power
   * spectrum of the window's crop texture (pulse/background-reference.ts `textureReference`, same
   * bins as the window's), the second reference `anchorShare` weighs by.
   */
  add(win: HrWindow, pos?: Float64Array, sampleRateHz?: number, texture?: Float64Array | null): void {
    const { lo, states, binHz } = win;
    const p = win.spectra[0].power;
    const n = win.noiseSpectrum?.power ?? null;
    let tp = 0;
    let tn = 0;
    let tt = 0;
    for (let i = 0; i < states; i++) {
      tp += p[lo + i];
      if (n) tn += n[lo + i];
      if (texture) tt += texture[lo + i];
    }
    if (!(tp > 0)) return;
    for (let i = 0; i < states; i++) {
      const g = Math.round((lo + i) * binHz * 60) - GRID_MIN_BPM;
      if (g < 0 || g >= GRID_BINS) continue;
      this.pulse[g] += p[lo + i] / tp;
      if (n && tn > 0) this.ref[g] += n[lo + i] / tn;
      if (texture && tt > 0) this.tex[g] += texture[lo + i] / tt;
    }
    this.windows++;
    this.lowBpm = win.band.lowHz * 60;
    if (pos && sampleRateHz) this.addPeriod(pos, sampleRateHz, win.band.highHz * 60);
  }

  private addPeriod(x: Float64Array, fs: number, highBpm: number): void {
    const acc = this.acc;
    const g0 = Math.max(0, Math.ceil(2 * this.lowBpm) - GRID_MIN_BPM);
    const g1 = Math.min(GRID_BINS - 1, Math.floor(highBpm) - GRID_MIN_BPM);
    for (let g = g0; g <= g1; g += PERIOD_STRIDE_BPM) {
      const bpm = g + GRID_MIN_BPM;
      const f = bpm / 60 / fs;
      const wl = Math.round(6 / f);
      if (wl > x.length) continue;
      acc.fill(0);
      addCoupling(acc, x, (x.length - wl) >> 1, wl, f);
      const o = g * 5;
      this.period[o] += acc[0];
      this.period[o + 1] += acc[1];
      this.period[o + 2] += acc[2];
      this.period[o + 3] += lagCorrelation(x, 0, x.length, 2 / f) - lagCorrelation(x, 0, x.length, 1 / f);
      this.period[o + 4]++;
    }
  }

  /** The grid index of the reference-weighted peak (−1 without one), within [from, to]. */
  private peak(from = 0, to = GRID_BINS - 1): number {
    let peakRef = 0;
    for (let g = 0; g < GRID_BINS; g++) if (this.ref[g] > peakRef) peakRef = this.ref[g];
    let best = -1;
    let bestScore = 0;
    for (let g = Math.max(0, from); g <= Math.min(GRID_BINS - 1, to); g++) {
      const s = this.pulse[g] / (peakRef > 0 ? 1 + (CAPTURE_REFERENCE_PENALTY * this.ref[g]) / peakRef : 1);
      if (s > bestScore) {
        bestScore = s;
        best = g;
      }
    }
    return best;
  }

  /**
   * The period-doubling verdict on the running peak (grid index): 'half' when the evidence pooled
   * within PERIOD_REACH_BPM passes both offline thresholds, 'doubtful' when its f/2 and f are
   * phase-locked but the autocorrelation gain is only within PERIOD_DOUBT_AC_GAIN of the threshold
   * (the live 10 Hz windows put it at 0.27–0.39 on phantoms at 45 bpm whose peak is the double),
   * 'peak' otherwise.
   */
  private verdict(best: number): 'half' | 'doubtful' | 'peak' {
    if ((best + GRID_MIN_BPM) / 2 < this.lowBpm) return 'peak';
    // The evidence of the grid rates around the peak, pooled (the peak wanders by a few bpm while
    // the capture grows; the statistics barely change over that span).
    const p = this.period;
    const acc = this.acc.fill(0);
    let gain = 0;
    let n = 0;
    let most = 0;
    for (let g = Math.max(0, best - PERIOD_REACH_BPM); g <= Math.min(GRID_BINS - 1, best + PERIOD_REACH_BPM); g++) {
      const o = g * 5;
      acc[0] += p[o];
      acc[1] += p[o + 1];
      acc[2] += p[o + 2];
      gain += p[o + 3];
      n += p[o + 4];
      most = Math.max(most, p[o + 4]);
    }
    if (most < PERIOD_MIN_WINDOWS || coupling(acc) < PERIOD_DOUBLING_COUPLING) return 'peak';
    if (gain / n >= PERIOD_DOUBLING_AC_GAIN) return 'half';
    return gain / n >= PERIOD_DOUBLING_AC_GAIN - PERIOD_DOUBT_AC_GAIN ? 'doubtful' : 'peak';
  }

  /** The anchor, bpm; NaN before the first window with in-band power. */
  anchorBpm(): number {
    if (this.windows === 0) return NaN;
    let best = this.peak();
    if (best < 0) return NaN;
    if (this.verdict(best) === 'half') {
      const half = (best + GRID_MIN_BPM) / 2 - GRID_MIN_BPM;
      const reach = ANCHOR_SHARE_HALF_WIDTH_HZ * 60;
      const h = this.peak(Math.ceil(half - reach), Math.floor(half + reach));
      if (h >= 0) best = h;
    }
    return best + GRID_MIN_BPM;
  }

  /**
   * Share of the reference-weighted running sum within ±ANCHOR_SHARE_HALF_WIDTH_HZ of the anchor
   * (0..1; NaN before the first window): the offline `anchorShare` (capture-rate.ts) of the
   * capture so far, the capture-level evidence the publication gate weighs (quality.ts). Weighted,
   * as offline, by both references: the background pulse and the crop texture (the texture only
   * here: in the anchor and the live pulses it moved the live rate away from the final, see
   * docs/engine.md). Without the texture the live share ran 0.06 from the final's on average, and
   * up to 0.2 below it on clean phantoms at 50–55 bpm; with it 0.035.
   */
  anchorShare(): number {
    const a = this.anchorBpm();
    if (!Number.isFinite(a)) return NaN;
    let peakRef = 0;
    let peakTex = 0;
    for (let g = 0; g < GRID_BINS; g++) {
      if (this.ref[g] > peakRef) peakRef = this.ref[g];
      if (this.tex[g] > peakTex) peakTex = this.tex[g];
    }
    const reach = ANCHOR_SHARE_HALF_WIDTH_HZ * 60;
    let near = 0;
    let total = 0;
    for (let g = 0; g < GRID_BINS; g++) {
      const s =
        this.pulse[g] /
        (peakRef > 0 ? 1 + (CAPTURE_REFERENCE_PENALTY * this.ref[g]) / peakRef : 1) /
        (peakTex > 0 ? 1 + (CAPTURE_REFERENCE_PENALTY * this.tex[g]) / peakTex : 1);
      total += s;
      if (Math.abs(g + GRID_MIN_BPM - a) <= reach) near += s;
    }
    return total > 0 ? near / total : 0;
  }

  /**
   * True when the running peak may be the double of the rate and the evidence does not settle it
   * (verdict 'doubtful'): the live rate then sends no event rather than perhaps the double.
   */
  doubtful(): boolean {
    const best = this.windows ? this.peak() : -1;
    return best >= 0 && this.verdict(best) === 'doubtful';
  }
}
