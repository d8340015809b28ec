// Beta blood-pressure and SpO2 estimates. Both are population-prior models with small, bounded
// adjustments and deliberately low confidence; they are trend indicators, not measurements.
//
// Blood pressure: pulse-morphology features of the PPG (heart rate and the rise-time share of the
// beat) as surveyed by Elgendi et al., "The use of photoplethysmography for assessing
// hypertension", npj Digital Medicine 2:60, 2019, around the population mean of normotensive
// adults (~118/76 mmHg). Coefficients are illustrative priors, not fitted: we have no
// cuff-labelled data. SpO2: ratio of ratios of the red and blue channels' pulsatile (AC/DC)
// components, Tarassenko et al., "Non-contact video-based vital sign monitoring using ambient light
// and auto-regressive models", Physiol. Meas. 35(5), 2014, mapped around the population normal of
// 97 % with a shallow uncalibrated slope and clamped to 92–99.5 %.

export interface BpEstimate {
  systolicMmHg: number;
  diastolicMmHg: number;
  confidence: number;
}
export interface Spo2Estimate {
  value: number;
  confidence: number;
}

/** Upper bound on any beta confidence: these models are not validated. */
export const BETA_MAX_CONFIDENCE = 0.3;

/**
 * @param hrBpm tracked heart rate
 * @param riseFraction median (peak time − foot time) / beat period, ~0.3 for a compliant artery
 * @param sqi pulse signal quality 0..1
 */
export function estimateBloodPressure(hrBpm: number, riseFraction: number, sqi: number): BpEstimate {
  const rf = Number.isFinite(riseFraction) ? Math.min(0.6, Math.max(0.1, riseFraction)) : 0.3;
  // Faster rates and steeper (shorter) upstrokes go with higher pressure (stiffer arteries).
  const sys = 118 + 0.3 * (hrBpm - 70) + 30 * (0.3 - rf);
  const dia = 76 + 0.2 * (hrBpm - 70) + 12 * (0.3 - rf);
  return {
    systolicMmHg: Math.min(150, Math.max(95, sys)),
    diastolicMmHg: Math.min(95, Math.max(55, dia)),
    confidence: Math.min(BETA_MAX_CONFIDENCE, 0.1 + 0.2 * Math.max(0, Math.min(1, sqi))),
  };
}

/**
 * @param ratioOfRatios (AC/DC red) / (AC/DC blue) of the pulsatile components
 * @param sqi pulse signal quality 0..1
 */
export function estimateSpo2(ratioOfRatios: number, sqi: number): Spo2Estimate {
  const r = Number.isFinite(ratioOfRatios) ? ratioOfRatios : 1;
  const value = Math.min(99.5, Math.max(92, 97 - 2 * (r - 1)));
  return { value, confidence: Math.min(BETA_MAX_CONFIDENCE * 0.8, 0.05 + 0.15 * Math.max(0, Math.min(1, sqi))) };
}
