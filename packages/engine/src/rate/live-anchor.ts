// The capture-rate anchor (capture-rate.ts) kept online for the streaming estimator: every live
// 10 s window adds its normalised in-band POS periodogram, and its background reference's, to
// running sums on a grid of whole beats per minute (live windows are resampled at slightly
// different rates, so their bins do not line up exactly). The anchor is the peak of the pulse sum
// divided by (1 + K·ref/max ref), as offline: the averaging of Welch's method (IEEE Trans. Audio
// Electroacoust. 15(2), 1967) over the windows so far. A live rate far from it is a noise peak
// that one window's SQI let through (codec pumping near 1 Hz on low-bitrate video, in ubfc2).
import { CAPTURE_REFERENCE_PENALTY } from './capture-rate.js';
import type { HrWindow } from './hr-spectrum.js';

const GRID_MIN_BPM = 20;
const GRID_BINS = 240;

export class LiveAnchor {
  private readonly pulse = new Float64Array(GRID_BINS);
  private readonly ref = new Float64Array(GRID_BINS);
  private windows = 0;

  /** Bytes held (two fixed grids). */
  get retainedBytes(): number {
    return this.pulse.byteLength + this.ref.byteLength;
  }

  /** Adds one live window (POS is the window's first spectrum). */
  add(win: HrWindow): void {
    const { lo, states, binHz } = win;
    const p = win.spectra[0].power;
    const n = win.noiseSpectrum?.power ?? null;
    let tp = 0;
    let tn = 0;
    for (let i = 0; i < states; i++) {
      tp += p[lo + i];
      if (n) tn += n[lo + i];
    }
    if (!(tp > 0)) return;
    for (let i = 0; i < states; i++) {
      const g = Math.round((lo + i) * binHz * 60) - GRID_MIN_BPM;
      if (g < 0 || g >= GRID_BINS) continue;
      this.pulse[g] += p[lo + i] / tp;
      if (n && tn > 0) this.ref[g] += n[lo + i] / tn;
    }
    this.windows++;
  }

  /** The anchor, bpm; NaN before the first window with in-band power. */
  anchorBpm(): number {
    if (this.windows === 0) return NaN;
    let peakRef = 0;
    for (let g = 0; g < GRID_BINS; g++) if (this.ref[g] > peakRef) peakRef = this.ref[g];
    let best = -1;
    let bestScore = 0;
    for (let g = 0; g < GRID_BINS; g++) {
      const s = this.pulse[g] / (peakRef > 0 ? 1 + (CAPTURE_REFERENCE_PENALTY * this.ref[g]) / peakRef : 1);
      if (s > bestScore) {
        bestScore = s;
        best = g;
      }
    }
    return best < 0 ? NaN : best + GRID_MIN_BPM;
  }
}
