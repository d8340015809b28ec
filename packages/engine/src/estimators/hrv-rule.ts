// The HRV publication rule (docs/engine.md, step 8): which captures' beat intervals are clean
// enough for HRV and the stress index. One rule for the offline measurement and the live `hrv` event.
import type { QualityLevel } from '../types.js';
import type { PulseVitals } from '../vitals/pulse-vitals.js';
import { hrvAboveTimingNoise } from '../beats/timing-noise.js';

/** HRV needs at least this much capture (spec, Limits: "shorter cannot produce HRV"). */
export const HRV_MIN_DURATION_SEC = 20;
const HRV_MIN_INTERVALS = 15;
const HRV_MIN_ACCEPTED = 0.6;
/**
 * HRV (and the stress index, which comes from the same intervals) is published only for a `good`
 * capture. Beat timing needs a cleaner pulse than the rate does: on the ubfc2 recordings every
 * `fair` capture's RMSSD was 45–49 ms above its contact-PPG reference (beat-time errors of about
 * 25 ms, under one frame; docs/accuracy.md, "HRV against the contact PPG"), while its heart rate was
 * within 1.5 bpm. A `fair` capture still publishes its rate, breathing and the beta estimates.
 */
const HRV_MIN_LEVEL: QualityLevel = 'good';

/**
 * Every HRV condition but the timing-noise one: a `good` capture of ≥ 20 s with ≥ 15 NN intervals
 * and ≥ 60 % of its intervals accepted (the camera-HRV bar's calibration, scripts/eval/hrv-bar.ts,
 * chooses the timing-noise threshold among the captures that pass these).
 */
export function hrvEligible(v: Pick<PulseVitals, 'hrv'>, level: QualityLevel, durationSec: number): boolean {
  const h = v.hrv;
  return (
    h !== null &&
    level === HRV_MIN_LEVEL &&
    durationSec >= HRV_MIN_DURATION_SEC &&
    h.nnCount >= HRV_MIN_INTERVALS &&
    h.acceptedFraction >= HRV_MIN_ACCEPTED
  );
}

/**
 * Least sample rate (Hz, the capture's median frame rate) for HRV. On the calibration phantom
 * seeds, captures at 15–25 fps whose timing-noise share passed still had RMSSDs outside the
 * tolerance, those at 30 and 60 fps did not (scripts/eval/hrv-bar.ts); the floor lies between the
 * tested 25 and 30 fps, below the 29–30 Hz that "30 fps" webcams deliver.
 */
export const HRV_MIN_SAMPLE_RATE_HZ = 28;

/**
 * Whether HRV (and the stress index) may be published: the one rule for the offline measurement and
 * the live `hrv` event. `level` is the capture's quality verdict, `durationSec` its length,
 * `sampleRateHz` its frame rate. Beyond `hrvEligible`, the beat timing must be mostly signal
 * (timing-noise share ≤ 0.30, beats/timing-noise.ts) and the frame rate ≥ 28 Hz, both chosen on
 * calibration phantom seeds and judged on fresh ones (docs/accuracy.md, "What camera HRV needs").
 */
export function hrvPublishable(
  v: Pick<PulseVitals, 'hrv' | 'timingNoiseMs'>,
  level: QualityLevel,
  durationSec: number,
  sampleRateHz: number,
): boolean {
  return (
    v.hrv !== null &&
    hrvEligible(v, level, durationSec) &&
    sampleRateHz >= HRV_MIN_SAMPLE_RATE_HZ &&
    hrvAboveTimingNoise(v.hrv.rmssdMs, v.timingNoiseMs)
  );
}
