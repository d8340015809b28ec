// RR (inter-beat) intervals with artifact and ectopic rejection: physiological bounds 300–2000 ms
// and rejection of intervals deviating more than 25 % from the local median (vitallens-core
// `src/signal/hrv.rs` uses 25 % against the last accepted interval; a local median is robust to a
// run of bad beats: Kamath & Fallen, "Correction of the heart rate variability signal for
// ectopics and missing beats", in Malik & Camm, Heart Rate Variability, 1995).

export interface RrSeries {
  /** All raw intervals between consecutive detected beats, ms. */
  rawMs: Float64Array;
  /** Accepted flag per raw interval. */
  accepted: Uint8Array;
  /** Accepted intervals in order (NN intervals), ms. */
  nnMs: Float64Array;
  /** Time of the end beat of each raw interval, s. */
  endSec: Float64Array;
}

export const RR_MIN_MS = 300;
export const RR_MAX_MS = 2000;
export const RR_MAX_DEVIATION = 0.25;

export function rrIntervals(peakSec: ArrayLike<number>): RrSeries {
  const n = Math.max(0, peakSec.length - 1);
  const raw = new Float64Array(n);
  const endSec = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    raw[i] = (peakSec[i + 1] - peakSec[i]) * 1000;
    endSec[i] = peakSec[i + 1];
  }
  const accepted = new Uint8Array(n);
  const half = 5;
  const buf: number[] = [];
  for (let i = 0; i < n; i++) {
    if (raw[i] < RR_MIN_MS || raw[i] > RR_MAX_MS) continue;
    buf.length = 0;
    for (let j = Math.max(0, i - half); j <= Math.min(n - 1, i + half); j++) {
      if (raw[j] >= RR_MIN_MS && raw[j] <= RR_MAX_MS) buf.push(raw[j]);
    }
    buf.sort((a, b) => a - b);
    const med = buf[buf.length >> 1];
    if (Math.abs(raw[i] - med) <= RR_MAX_DEVIATION * med) accepted[i] = 1;
  }
  const nn: number[] = [];
  for (let i = 0; i < n; i++) if (accepted[i]) nn.push(raw[i]);
  return { rawMs: raw, accepted, nnMs: Float64Array.from(nn), endSec };
}
