// Beat detection on the pulse signal: local maxima with a rate-adaptive refractory period and a
// prominence floor, sub-sample refinement by parabolic interpolation (vitallens-core
// `src/signal/hrv.rs`; Elgendi et al., "Systolic peak detection in acceleration
// photoplethysmograms measured from emergency responders in tropical conditions", PLoS ONE 8(10),
// 2013, for rate-adaptive detection on PPG).

export interface Beats {
  /** Peak times in seconds from the first sample (sub-sample refined). */
  peakSec: Float64Array;
  /** Peak height above the preceding trough, signal units. */
  amplitude: Float64Array;
  /** Trough (foot) value before each peak. */
  troughValue: Float64Array;
  /** Trough (foot) time before each peak, seconds. */
  troughSec: Float64Array;
}

/**
 * Detects beats in `pulse` sampled at `sampleRateHz`. `expectedHz` (the tracked heart rate) sets the
 * refractory period to 55 % of the expected beat period.
 */
export function detectBeats(pulse: ArrayLike<number>, sampleRateHz: number, expectedHz: number): Beats {
  const n = pulse.length;
  const cand: number[] = [];
  for (let i = 1; i < n - 1; i++) if (pulse[i] > pulse[i - 1] && pulse[i] >= pulse[i + 1]) cand.push(i);
  const refractory = Math.max(1, Math.floor((0.55 * sampleRateHz) / Math.max(0.5, expectedHz)));
  // Greedy by height: keep the tallest maxima at least `refractory` samples apart.
  const order = cand.slice().sort((a, b) => pulse[b] - pulse[a]);
  const taken = new Uint8Array(n);
  const kept: number[] = [];
  for (const i of order) {
    let ok = true;
    for (let j = Math.max(0, i - refractory + 1); j < Math.min(n, i + refractory); j++) {
      if (taken[j]) {
        ok = false;
        break;
      }
    }
    if (ok) {
      taken[i] = 1;
      kept.push(i);
    }
  }
  kept.sort((a, b) => a - b);
  // Prominence: height above the lowest point since the previous kept peak.
  const amp: number[] = [];
  const trough: number[] = [];
  const troughIdx: number[] = [];
  for (let k = 0; k < kept.length; k++) {
    const start = k > 0 ? kept[k - 1] : Math.max(0, kept[k] - refractory * 2);
    let mi = start;
    for (let j = start; j <= kept[k]; j++) if (pulse[j] < pulse[mi]) mi = j;
    amp.push(pulse[kept[k]] - pulse[mi]);
    trough.push(pulse[mi]);
    troughIdx.push(mi);
  }
  const sortedAmp = amp.slice().sort((a, b) => a - b);
  const medAmp = sortedAmp.length ? sortedAmp[sortedAmp.length >> 1] : 0;
  const peakSec: number[] = [];
  const amplitude: number[] = [];
  const troughValue: number[] = [];
  const troughSec: number[] = [];
  for (let k = 0; k < kept.length; k++) {
    if (amp[k] < 0.25 * medAmp) continue;
    const i = kept[k];
    let delta = 0;
    if (i > 0 && i < n - 1) {
      const a = pulse[i - 1];
      const b = pulse[i];
      const c = pulse[i + 1];
      const den = a - 2 * b + c;
      if (den < 0) delta = Math.max(-0.5, Math.min(0.5, (0.5 * (a - c)) / den));
    }
    peakSec.push((i + delta) / sampleRateHz);
    amplitude.push(amp[k]);
    troughValue.push(trough[k]);
    troughSec.push(troughIdx[k] / sampleRateHz);
  }
  return {
    peakSec: Float64Array.from(peakSec),
    amplitude: Float64Array.from(amplitude),
    troughValue: Float64Array.from(troughValue),
    troughSec: Float64Array.from(troughSec),
  };
}
