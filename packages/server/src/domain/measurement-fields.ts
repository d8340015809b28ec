/**
 * The engine's result → the fields settleJob stores: one rule for every door (a frames or video
 * job, a live session), so the same packets give the same measurement whichever way they came.
 * - A poor capture (quality not good/fair, or no heart rate) carries no metric at all, whatever the
 *   engine computed internally, and is not complete (spec: Measurement rule 1; CLARIFICATIONS 10).
 * - Metric blocks keep the confidences the measurement schema allows (heart rate, HRV, breathing,
 *   blood pressure, SpO2); engine diagnostics stay in the job's `stats`.
 * - The raw block is not stored: neither a session nor a job has the advanced opt-in
 *   (docs/decisions.md, "Raw block").
 * - Quality reasons (docs/engine.md, "Quality reasons") are kept in every case: they say why.
 * - Emotion and gaze: the means of what the aux models returned (shape in docs/decisions.md),
 *   `null` when nothing was analysed; settleJob keeps them only when the feature was accepted.
 */
import type { CaptureSource, EngineMeasurement } from '@vitals/engine';
import { QUALITY_REASON_HINTS } from '@vitals/protocol';
import type { MeasurementFields } from './jobs.js';

/** The spec's eight emotion classes, in order (spec: Streaming events, `emotion`). */
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

/** Running sums of the aux models' results over a capture. */
export interface AuxAggregate {
  emotionSamples: number;
  emotionSum: number[];
  gazeSamples: number;
  yawSum: number;
  pitchSum: number;
}

export const newAuxAggregate = (): AuxAggregate => ({
  emotionSamples: 0,
  emotionSum: new Array<number>(EMOTION_ORDER.length).fill(0),
  gazeSamples: 0,
  yawSum: 0,
  pitchSum: 0,
});

/** One image's analysis (the media package's AuxAnalyzer result). */
export interface AuxSample {
  emotion?: readonly number[] | null;
  gaze?: { yaw: number; pitch: number } | null;
}

/** Adds what was ordered of one image's analysis; says what was counted (the stream sends those live). */
export function addAuxSample(
  agg: AuxAggregate,
  s: AuxSample,
  want: { emotion: boolean; gaze: boolean },
): { emotion: boolean; gaze: boolean } {
  const emotion = want.emotion && s.emotion?.length === EMOTION_ORDER.length;
  if (emotion) {
    agg.emotionSamples++;
    s.emotion!.forEach((v, i) => (agg.emotionSum[i] += v));
  }
  const gaze = want.gaze && !!s.gaze;
  if (gaze) {
    agg.gazeSamples++;
    agg.yawSum += s.gaze!.yaw;
    agg.pitchSum += s.gaze!.pitch;
  }
  return { emotion, gaze };
}

const r3 = (v: number): number => Math.round(v * 1000) / 1000;

export function auxFields(agg: AuxAggregate): Pick<MeasurementFields, 'emotion' | 'gaze'> {
  let emotion = null;
  if (agg.emotionSamples > 0) {
    const probs = agg.emotionSum.map((s) => r3(s / agg.emotionSamples));
    emotion = { probs, dominant: EMOTION_ORDER[probs.indexOf(Math.max(...probs))], samples: agg.emotionSamples };
  }
  const gaze =
    agg.gazeSamples > 0
      ? {
          meanYaw: r3(agg.yawSum / agg.gazeSamples),
          meanPitch: r3(agg.pitchSum / agg.gazeSamples),
          unit: 'rad',
          samples: agg.gazeSamples,
        }
      : null;
  return { emotion, gaze };
}

/** What the engine's quality reasons use of a video job's media statistics (bits per pixel, face presence). */
export function videoCaptureSource(v: {
  bitRateBps?: number | null;
  width: number;
  height: number;
  fps: number;
  facePresence: number;
}): CaptureSource {
  const pixelsPerSec = v.width * v.height * v.fps;
  const bitsPerPixel = v.bitRateBps && pixelsPerSec > 0 ? v.bitRateBps / pixelsPerSec : undefined;
  return { bitsPerPixel, facePresence: v.facePresence };
}

export function isPoor(m: EngineMeasurement): boolean {
  return (m.quality?.level !== 'good' && m.quality?.level !== 'fair') || !m.cardiac?.heartRate;
}

/** The stored fields of a capture; `undefined` when no frame was processed (a poor capture of 0 s). */
export function measurementFields(m: EngineMeasurement | undefined, aux = newAuxAggregate()): MeasurementFields {
  const none = {
    cardiac: { heartRate: null },
    hrv: null,
    respiratory: { breathingRate: null },
    stress: null,
    bloodPressure: null,
    spo2: null,
  };
  if (!m)
    return {
      durationSec: 0,
      isComplete: false,
      // Not one frame with a face reached the engine.
      quality: {
        level: 'poor',
        score: 0,
        usable: false,
        reasons: [{ code: 'face_lost', hint: QUALITY_REASON_HINTS.face_lost, value: 1 }],
      },
      ...none,
      ...auxFields(aux),
    };
  if (isPoor(m))
    return {
      durationSec: m.durationSec,
      isComplete: false,
      quality: { ...m.quality, level: 'poor', usable: false },
      ...none,
      ...auxFields(aux),
    };
  return {
    durationSec: m.durationSec,
    isComplete: m.isComplete,
    quality: { ...m.quality },
    cardiac: m.cardiac,
    hrv: m.hrv && {
      sdnnMs: m.hrv.sdnnMs,
      rmssdMs: m.hrv.rmssdMs,
      pnn50Pct: m.hrv.pnn50Pct,
      confidence: m.hrv.confidence,
    },
    respiratory: m.respiratory,
    stress: m.stress,
    bloodPressure: m.bloodPressure,
    spo2: m.spo2,
    ...auxFields(aux),
  };
}
