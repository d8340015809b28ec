// Heart rate over a capture: sliding 10 s windows with a 1 s step (pyVHR `BPM.py` uses 5–10 s
// windows and a 1 s step), per-window harmonic-checked spectra of every pulse method, Viterbi
// tracking across windows (hr-track.ts). The track gives the window SQIs (quality gate), the pulse
// method and, for waveformToVitals, the rate; the camera chain's capture rate is capture-rate.ts.
import { bandObservable, HR_BAND, hrWindow, refineRateHz, type HrBand, type HrWindow } from './hr-spectrum.js';
import { viterbiPath } from './hr-track.js';
import { interpolatePeakBin, nextPow2 } from '../dsp/spectrum.js';

export const HR_WINDOW_SEC = 10;
export const HR_STEP_SEC = 1;

export interface HrTrack {
  /** End time of each window, seconds from the first sample. */
  windowEndSec: Float64Array;
  hrBpm: Float64Array;
  sqi: Float64Array;
  /** Index (into the pulses array) of the best method per window. */
  method: Int32Array;
  /** The analysed windows (spectra per method, background spectrum), each `windowLen` samples ending at `windowEnd`. */
  windows: HrWindow[];
  windowEnd: Int32Array;
  windowLen: number;
  /** SQI-weighted mean of tracked window rates, bpm; NaN if no window. */
  meanHrBpm: number;
  /**
   * Capture heart rate: the peak of the windows' averaged (Welch-style) score spectrum within
   * ±max(6 bpm, 8 %) of the tracked mean, bpm; NaN if no window. The averaged spectrum peaks at the
   * rate the capture spent most time at (as a whole-clip periodogram does, which is how the
   * rPPG-Toolbox and vitallens-core define a clip's rate) while the tracker keeps it away from noise.
   */
  captureHrBpm: number;
}

/** FFT length for a window: ≥ 4× the window and ≥ 60·fs/0.9 so bins are under ~0.9 bpm. */
export function hrNfft(windowLen: number, sampleRateHz: number): number {
  return nextPow2(Math.max(4 * windowLen, Math.ceil((60 * sampleRateHz) / 0.9)));
}

function averagedPeakBpm(windows: HrWindow[], trackedMeanBpm: number): number {
  if (!windows.length || !Number.isFinite(trackedMeanBpm)) return trackedMeanBpm;
  const w0 = windows[0];
  const avg = new Float64Array(w0.states);
  for (const w of windows) for (let i = 0; i < w.states; i++) avg[i] += w.score[i];
  const half = Math.max(6, 0.08 * trackedMeanBpm);
  const binBpm = w0.binHz * 60;
  const lo = Math.max(0, Math.ceil((trackedMeanBpm - half) / binBpm) - w0.lo);
  const hi = Math.min(w0.states - 1, Math.floor((trackedMeanBpm + half) / binBpm) - w0.lo);
  if (hi <= lo) return trackedMeanBpm;
  let best = lo;
  for (let i = lo + 1; i <= hi; i++) if (avg[i] > avg[best]) best = i;
  if ((best === lo && lo > 0) || (best === hi && hi < w0.states - 1)) return trackedMeanBpm;
  return (w0.lo + interpolatePeakBin(avg, best)) * binBpm;
}

export function trackHeartRate(
  pulses: Float64Array[],
  sampleRateHz: number,
  opts: { windowSec?: number; stepSec?: number; band?: HrBand; noise?: Float64Array | null } = {},
): HrTrack {
  const band = opts.band ?? HR_BAND;
  const n = pulses[0].length;
  const windowSec = opts.windowSec ?? HR_WINDOW_SEC;
  const stepSec = opts.stepSec ?? HR_STEP_SEC;
  let len = Math.round(windowSec * sampleRateHz);
  const step = Math.max(1, Math.round(stepSec * sampleRateHz));
  if (n < len) len = n;
  const windows: HrWindow[] = [];
  const ends: number[] = [];
  if (len >= Math.round(4 * sampleRateHz) && len >= 8 && bandObservable(band, sampleRateHz)) {
    const nfft = hrNfft(len, sampleRateHz);
    for (let end = len; end <= n; end += step) {
      windows.push(hrWindow(pulses, end - len, end, sampleRateHz, nfft, band, opts.noise ?? null));
      ends.push(end);
    }
    if (ends.length && ends[ends.length - 1] < n) {
      windows.push(hrWindow(pulses, n - len, n, sampleRateHz, nfft, band, opts.noise ?? null));
      ends.push(n);
    }
  }
  const path = viterbiPath(windows, stepSec);
  const m = windows.length;
  const hr = new Float64Array(m);
  const sqi = new Float64Array(m);
  const method = new Int32Array(m);
  let wsum = 0;
  let hsum = 0;
  for (let i = 0; i < m; i++) {
    const w = windows[i];
    const r = refineRateHz(w, w.lo + path[i]);
    hr[i] = r.freqHz * 60;
    sqi[i] = r.sqi;
    method[i] = r.method;
    const wt = r.sqi * r.sqi + 1e-6;
    wsum += wt;
    hsum += wt * hr[i];
  }
  return {
    captureHrBpm: averagedPeakBpm(windows, m ? hsum / wsum : NaN),
    windowEndSec: Float64Array.from(ends, (e) => e / sampleRateHz),
    windows,
    windowEnd: Int32Array.from(ends),
    windowLen: len,
    hrBpm: hr,
    sqi,
    method,
    meanHrBpm: m ? hsum / wsum : NaN,
  };
}
