// Heart rate over a capture: sliding 10 s windows with a 1 s step (pyVHR `BPM.py` uses 5–10 s
// windows and a 1 s step), per-window harmonic-checked spectra of every pulse method, Viterbi
// tracking across windows (hr-track.ts), then the capture rate as the SQI-weighted mean of the
// tracked per-window rates (the reference is 60 / mean inter-beat interval over the clip).
import { hrWindow, refineRateHz, type HrWindow } from './hr-spectrum.js';
import { viterbiPath } from './hr-track.js';
import { nextPow2 } from '../dsp/spectrum.js';

export const HR_WINDOW_SEC = 10;
export const HR_STEP_SEC = 1;

export interface HrTrack {
  /** End time of each window, seconds from the first sample. */
  windowEndSec: Float64Array;
  hrBpm: Float64Array;
  sqi: Float64Array;
  /** Index (into the pulses array) of the best method per window. */
  method: Int32Array;
  /** Capture heart rate (SQI-weighted mean of tracked window rates), bpm; NaN if no window. */
  meanHrBpm: number;
}

/** FFT length for a window: ≥ 4× the window and ≥ 60·fs/0.9 so bins are under ~0.9 bpm. */
export function hrNfft(windowLen: number, sampleRateHz: number): number {
  return nextPow2(Math.max(4 * windowLen, Math.ceil((60 * sampleRateHz) / 0.9)));
}

export function trackHeartRate(
  pulses: Float64Array[],
  sampleRateHz: number,
  opts: { windowSec?: number; stepSec?: number } = {},
): HrTrack {
  const n = pulses[0].length;
  const windowSec = opts.windowSec ?? HR_WINDOW_SEC;
  const stepSec = opts.stepSec ?? HR_STEP_SEC;
  let len = Math.round(windowSec * sampleRateHz);
  const step = Math.max(1, Math.round(stepSec * sampleRateHz));
  if (n < len) len = n;
  const windows: HrWindow[] = [];
  const ends: number[] = [];
  if (len >= Math.round(4 * sampleRateHz)) {
    const nfft = hrNfft(len, sampleRateHz);
    for (let end = len; end <= n; end += step) {
      windows.push(hrWindow(pulses, end - len, end, sampleRateHz, nfft));
      ends.push(end);
    }
    if (ends.length && ends[ends.length - 1] < n) {
      windows.push(hrWindow(pulses, n - len, n, sampleRateHz, nfft));
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
    windowEndSec: Float64Array.from(ends, (e) => e / sampleRateHz),
    hrBpm: hr,
    sqi,
    method,
    meanHrBpm: m ? hsum / wsum : NaN,
  };
}
