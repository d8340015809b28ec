// RR (inter-beat) intervals with artifact and ectopic rejection: an interval is kept when it lies
// within 300–2000 ms and differs by at most 25 % from the last accepted interval, the comparison
// being seeded with the median of the in-range intervals (vitallens-core `src/signal/hrv.rs`
// `filter_outliers` and `scripts/prepare_test_data.py`, whose fixtures' HRV values are defined this
// way). The previous-accepted-interval criterion is the classic one of Malik et al., "Heart rate
// variability in relation to prognosis after myocardial infarction: selection of optimal processing
// techniques", Eur Heart J 10(12), 1989 (20 % there). An ectopic beat gives a short–long pair, a
// missed beat a doubled interval and a false beat two short ones: each differs from its predecessor
// by far more than normal sinus variability, so it is dropped and the next normal interval is again
// compared with the last normal one. The median seed keeps a bad first interval from becoming the
// reference.
//
// Intervals can also be excluded before the comparison (`beatUsable`): vitallens-core uses an
// interval only when both its beats have waveform confidence ≥ 0.5. An excluded interval is not
// accepted and does not become the reference.
//
// Known limit of the rule: after a true step change of more than 25 % (or a long excluded stretch
// across which the rhythm drifted) the reference stays at the old level and later intervals are
// rejected until one falls back within 25 % of it.

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

/**
 * @param peakSec beat times, s, increasing.
 * @param beatUsable optional per-beat flag (e.g. waveform confidence ≥ 0.5 at the beat); an
 *   interval is considered only when both its beats are usable.
 */
export function rrIntervals(peakSec: ArrayLike<number>, beatUsable?: ArrayLike<boolean>): RrSeries {
  const n = Math.max(0, peakSec.length - 1);
  const raw = new Float64Array(n);
  const endSec = new Float64Array(n);
  const eligible = new Uint8Array(n);
  const inRange: number[] = [];
  for (let i = 0; i < n; i++) {
    raw[i] = (peakSec[i + 1] - peakSec[i]) * 1000;
    endSec[i] = peakSec[i + 1];
    const usable = !beatUsable || (beatUsable[i] && beatUsable[i + 1]);
    if (usable && raw[i] >= RR_MIN_MS && raw[i] <= RR_MAX_MS) {
      eligible[i] = 1;
      inRange.push(raw[i]);
    }
  }
  const accepted = new Uint8Array(n);
  const nn: number[] = [];
  if (inRange.length) {
    inRange.sort((a, b) => a - b);
    let last = inRange[inRange.length >> 1];
    for (let i = 0; i < n; i++) {
      if (!eligible[i] || Math.abs(raw[i] - last) > RR_MAX_DEVIATION * last) continue;
      accepted[i] = 1;
      nn.push(raw[i]);
      last = raw[i];
    }
  }
  return { rawMs: raw, accepted, nnMs: Float64Array.from(nn), endSec };
}
