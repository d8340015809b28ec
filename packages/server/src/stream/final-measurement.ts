/**
 * The engine's result → the fields settleJob stores (spec: Measurement rules 1-3; CLARIFICATIONS
 * 10). A poor capture carries no metric at all, whatever the engine computed internally.
 */
import type { EngineMeasurement } from '@vitals/engine';
import type { MeasurementFields } from '../domain/jobs.js';

export interface AuxAggregate {
  emotionSamples: number;
  emotionSum: number[];
  gazeSamples: number;
  yawSum: number;
  pitchSum: number;
}

export const newAuxAggregate = (): AuxAggregate => ({
  emotionSamples: 0,
  emotionSum: new Array(8).fill(0),
  gazeSamples: 0,
  yawSum: 0,
  pitchSum: 0,
});

export const EMOTION_ORDER = [
  'Anger',
  'Contempt',
  'Disgust',
  'Fear',
  'Happiness',
  'Neutral',
  'Sadness',
  'Surprise',
] as const;

const r3 = (v: number): number => Math.round(v * 1000) / 1000;

export function isPoor(m: EngineMeasurement): boolean {
  return m.quality?.level !== 'good' && m.quality?.level !== 'fair' ? true : !m.cardiac?.heartRate;
}

export function toFields(m: EngineMeasurement, aux: AuxAggregate): MeasurementFields {
  const fields: MeasurementFields = {
    durationSec: m.durationSec,
    isComplete: m.isComplete,
    quality: { ...m.quality },
    cardiac: m.cardiac ?? { heartRate: null },
    hrv: m.hrv
      ? { sdnnMs: m.hrv.sdnnMs, rmssdMs: m.hrv.rmssdMs, pnn50Pct: m.hrv.pnn50Pct, confidence: m.hrv.confidence }
      : null,
    respiratory: m.respiratory ?? { breathingRate: null },
    stress: m.stress ?? null,
    bloodPressure: m.bloodPressure ?? null,
    spo2: m.spo2 ?? null,
  };
  if (isPoor(m)) {
    fields.quality = { ...m.quality, level: 'poor', usable: false };
    fields.isComplete = false;
    fields.cardiac = { heartRate: null };
    fields.hrv = null;
    fields.respiratory = { breathingRate: null };
    fields.stress = null;
    fields.bloodPressure = null;
    fields.spo2 = null;
  }
  // Aggregates of the aux models (shape not shown in the spec; docs/streaming.md). Kept only when
  // the feature was accepted (settleJob filters by accepted features).
  if (aux.emotionSamples > 0) {
    const probs = aux.emotionSum.map((s) => r3(s / aux.emotionSamples));
    const top = probs.indexOf(Math.max(...probs));
    fields.emotion = { probs, dominant: EMOTION_ORDER[top], samples: aux.emotionSamples };
  } else fields.emotion = null;
  if (aux.gazeSamples > 0) {
    fields.gaze = {
      meanYaw: r3(aux.yawSum / aux.gazeSamples),
      meanPitch: r3(aux.pitchSum / aux.gazeSamples),
      unit: 'rad',
      samples: aux.gazeSamples,
    };
  } else fields.gaze = null;
  return fields;
}

/** No frame was processed: a poor capture without any metric. */
export function emptyFields(): MeasurementFields {
  return {
    durationSec: 0,
    isComplete: false,
    quality: { level: 'poor', score: 0, usable: false },
    cardiac: { heartRate: null },
    hrv: null,
    respiratory: { breathingRate: null },
    stress: null,
    bloodPressure: null,
    spo2: null,
    emotion: null,
    gaze: null,
  };
}
