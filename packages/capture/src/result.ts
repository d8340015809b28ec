/**
 * The on-device result (spec: tiers table, POST /sdk/v1/measurements): the engine's measurement in
 * the submission body shape, for the page to hand to its backend, which stores it with the key
 * (`vitals.measurements.submitOnDevice(body)`). The spec's measurement rule 1 applies here as on
 * the server: a poor capture carries no metric at all, whatever the engine computed internally.
 */
import type { EngineMeasurement } from '@vitals/engine';
import type { MeasurementInput } from '@vitals/sdk';

export interface OnDeviceResult extends MeasurementInput {
  source: 'web';
  sdkVersion: string;
  modelsVersion: string;
  durationSec: number;
  isComplete: boolean;
  /** The engine's quality, its reasons included (docs/engine.md, "Quality reasons"). */
  quality: EngineMeasurement['quality'];
}

const isPoor = (m: EngineMeasurement): boolean =>
  (m.quality.level !== 'good' && m.quality.level !== 'fair') || !m.cardiac.heartRate;

/** The body of `POST /sdk/v1/measurements` for an engine measurement made in the page. */
export function toOnDeviceResult(
  m: EngineMeasurement,
  versions: { sdkVersion: string; modelsVersion: string },
): OnDeviceResult {
  const base = {
    source: 'web' as const,
    sdkVersion: versions.sdkVersion,
    modelsVersion: versions.modelsVersion,
    durationSec: Math.round(m.durationSec * 1000) / 1000,
  };
  if (isPoor(m)) {
    return {
      ...base,
      isComplete: false,
      quality: { ...m.quality, level: 'poor', usable: false },
      cardiac: { heartRate: null },
      hrv: null,
      respiratory: { breathingRate: null },
      stress: null,
      bloodPressure: null,
      spo2: null,
    };
  }
  return {
    ...base,
    isComplete: m.isComplete,
    quality: { ...m.quality },
    cardiac: { heartRate: m.cardiac.heartRate },
    hrv: m.hrv ? { ...m.hrv } : null,
    respiratory: m.respiratory,
    stress: m.stress,
    bloodPressure: m.bloodPressure,
    spo2: m.spo2,
  };
}
