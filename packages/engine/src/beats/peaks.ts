// Beat detection on the pulse signal: local maxima with a rate-adaptive refractory period and a
// prominence floor, sub-sample refinement by parabolic interpolation (vitallens-core
// `src/signal/peaks.rs` and `src/signal/hrv.rs`; Elgendi et al., "Systolic peak detection in
// acceleration photoplethysmograms measured from emergency responders in tropical conditions",
// PLoS ONE 8(10), 2013, for rate-adaptive detection on PPG).
//
// Detection and localisation may use different signals: beats are found on a band-limited signal
// (robust to noise and baseline wander), and each peak can then be placed on a wider-band waveform
// as that waveform's highest sample between the beat's foot and the next beat's foot. Band-limiting
// reshapes the pulse (it moves the systolic maximum towards the fundamental's crest by up to a
// sample or two, differently from beat to beat), which inflates beat-to-beat interval differences;
// vitallens-core places peaks on the unfiltered model waveform. Two-stage detect-then-localise on
// the less filtered signal follows Elgendi et al. (2013) (blocks of interest on a filtered signal,
// peak = maximum of the signal inside each block).

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

/** Parabolic vertex offset (samples, |δ| ≤ 0.5) of a local maximum at `i`; 0 when not a proper maximum. */
export function parabolicOffset(x: ArrayLike<number>, i: number): number {
  if (i <= 0 || i >= x.length - 1) return 0;
  const a = x[i - 1];
  const b = x[i];
  const c = x[i + 1];
  const den = a - 2 * b + c;
  if (!(den < 0)) return 0;
  const d = (0.5 * (a - c)) / den;
  return Math.abs(d) <= 0.5 ? d : 0;
}

/**
 * Detects beats in `pulse` sampled at `sampleRateHz`. `expectedHz` (the tracked heart rate) sets the
 * refractory period to 55 % of the expected beat period. With `localizeOn` (same grid as `pulse`),
 * each detected beat's time is the highest sample of `localizeOn` between the beat's foot and the
 * next beat's foot on `pulse`, refined parabolically on `localizeOn`; amplitudes and feet stay those
 * of `pulse`.
 */
export function detectBeats(
  pulse: ArrayLike<number>,
  sampleRateHz: number,
  expectedHz: number,
  localizeOn?: ArrayLike<number>,
): Beats {
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
  const keep: number[] = [];
  for (let k = 0; k < kept.length; k++) if (amp[k] >= 0.25 * medAmp) keep.push(k);
  const loc = localizeOn && localizeOn.length === n ? localizeOn : null;
  const peakSec: number[] = [];
  const amplitude: number[] = [];
  const troughValue: number[] = [];
  const troughSec: number[] = [];
  for (let q = 0; q < keep.length; q++) {
    const k = keep[q];
    let i = kept[k];
    let delta: number;
    if (loc) {
      // Foot-to-foot segment of this beat on the detection signal.
      const from = troughIdx[k];
      const to = q + 1 < keep.length ? troughIdx[keep[q + 1]] : Math.min(n - 1, i + refractory);
      let best = i;
      for (let j = from; j <= to; j++) if (loc[j] > loc[best]) best = j;
      i = best;
      delta = parabolicOffset(loc, i);
    } else {
      delta = parabolicOffset(pulse, i);
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
