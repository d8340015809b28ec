/** The measurement: the submission body and the stored resource (spec: Resources, Measurement). */
import { Type, type Static } from '@sinclair/typebox';
import { USER_REF_PATTERN, VERSION_STRING_PATTERN } from '../limits.js';
import {
  QUALITY_REASON_CODE_PATTERN,
  QUALITY_REASON_CODES,
  QUALITY_REASON_HINT_MAX_CHARS,
  QUALITY_REASONS_MAX,
  QUALITY_REASONS_SUBMITTED_MAX,
} from '../quality-reasons.js';
import { Nullable, Num, StringEnum } from './shared.js';

export const UserRef = Type.String({ pattern: USER_REF_PATTERN, minLength: 1, maxLength: 64 });
export const VersionString = Type.String({ pattern: VERSION_STRING_PATTERN, minLength: 1, maxLength: 64 });

/** Why a capture is not better, with a hint (docs/engine.md, "Quality reasons"). */
export const QualityReason = Type.Object({
  code: StringEnum(QUALITY_REASON_CODES),
  hint: Type.String({ maxLength: QUALITY_REASON_HINT_MAX_CHARS }),
  /** The measured value behind the reason, in the unit docs/engine.md gives for its code. */
  value: Type.Optional(Num()),
});
export type QualityReason = Static<typeof QualityReason>;

const QUALITY_GRADE = {
  level: Type.Union([Type.Literal('good'), Type.Literal('fair'), Type.Literal('poor')]),
  score: Num({ minimum: 0, maximum: 1 }),
  usable: Type.Boolean(),
};

export const Quality = Type.Object({
  ...QUALITY_GRADE,
  /** Present on every measurement the service computes; empty when nothing is wrong. */
  reasons: Type.Optional(Type.Array(QualityReason, { maxItems: QUALITY_REASONS_MAX })),
});

/**
 * A reason as an on-device client submits it: any well-formed code, so that a client newer than the
 * server (one more code in its list) is not refused; the server keeps the codes it knows and drops
 * the others (docs/decisions.md, "On-device reasons are advice").
 */
export const SubmittedQualityReason = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 64, pattern: QUALITY_REASON_CODE_PATTERN }),
  hint: Type.String({ maxLength: QUALITY_REASON_HINT_MAX_CHARS }),
  value: Type.Optional(Num()),
});

export const SubmittedQuality = Type.Object({
  ...QUALITY_GRADE,
  reasons: Type.Optional(Type.Array(SubmittedQualityReason, { maxItems: QUALITY_REASONS_SUBMITTED_MAX })),
});

export const HeartRate = Type.Object({
  value: Num({ minimum: 20, maximum: 250 }),
  unit: Type.Literal('bpm'),
  confidence: Type.Optional(Num({ minimum: 0, maximum: 1 })),
});
export const Cardiac = Type.Object({ heartRate: Nullable(HeartRate) });
export const Hrv = Type.Object({
  sdnnMs: Num({ minimum: 0, maximum: 1000 }),
  rmssdMs: Num({ minimum: 0, maximum: 1000 }),
  pnn50Pct: Num({ minimum: 0, maximum: 100 }),
  confidence: Type.Optional(Num({ minimum: 0, maximum: 1 })),
});
export const BreathingRate = Type.Object({
  value: Num({ minimum: 1, maximum: 80 }),
  unit: Type.Literal('brpm'),
  confidence: Type.Optional(Num({ minimum: 0, maximum: 1 })),
});
export const Respiratory = Type.Object({ breathingRate: Nullable(BreathingRate) });
export const StressLevel = Type.Union([
  Type.Literal('low'),
  Type.Literal('moderate'),
  Type.Literal('high'),
  Type.Literal('very_high'),
]);
export const Stress = Type.Object({ index: Num({ minimum: 0 }), level: StressLevel, unit: Type.Literal('index') });
export const BloodPressure = Type.Object({
  systolicMmHg: Num({ minimum: 40, maximum: 260 }),
  diastolicMmHg: Num({ minimum: 20, maximum: 200 }),
  unit: Type.Literal('mmHg'),
  confidence: Num({ minimum: 0, maximum: 1 }),
  tier: Type.Literal('beta'),
});
export const Spo2 = Type.Object({
  value: Num({ minimum: 50, maximum: 100 }),
  unit: Type.Literal('%'),
  confidence: Num({ minimum: 0, maximum: 1 }),
  tier: Type.Literal('beta'),
});
export const Raw = Type.Object({
  rrIntervalsMs: Type.Array(Num(), { maxItems: 20000 }),
  ppgSignal: Type.Array(Num(), { maxItems: 100000 }),
  sampleRateHz: Num({ exclusiveMinimum: 0, maximum: 1000 }),
});

/** The metric blocks, the same in a submission and in the stored measurement. */
const METRICS = {
  quality: Type.Optional(Quality),
  cardiac: Type.Optional(Cardiac),
  hrv: Type.Optional(Nullable(Hrv)),
  respiratory: Type.Optional(Respiratory),
  stress: Type.Optional(Nullable(Stress)),
  bloodPressure: Type.Optional(Nullable(BloodPressure)),
  spo2: Type.Optional(Nullable(Spo2)),
};

/** Body of POST /sdk/v1/measurements. Only `source` is required. */
export const MeasurementSubmission = Type.Object(
  {
    source: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z][a-z0-9_]*$' }),
    durationSec: Type.Optional(Num({ minimum: 0, maximum: 3600 })),
    isComplete: Type.Optional(Type.Boolean()),
    sdkVersion: Type.Optional(VersionString),
    modelsVersion: Type.Optional(VersionString),
    ...METRICS,
    quality: Type.Optional(SubmittedQuality),
    userRef: Type.Optional(UserRef),
    includeAdvanced: Type.Optional(Type.Boolean()),
    raw: Type.Optional(Raw),
  },
  { additionalProperties: true },
);
export type MeasurementSubmission = Static<typeof MeasurementSubmission>;

/** The stored measurement as returned (spec: Resources, Measurement). */
export const Measurement = Type.Object({
  id: Type.String(),
  keyId: Type.String(),
  requestId: Type.String(),
  userRef: Type.Optional(Type.String()),
  origin: Type.Union([Type.Literal('on_device'), Type.Literal('cloud')]),
  attested: Type.Boolean(),
  source: Type.String(),
  createdAt: Type.Integer(),
  durationSec: Type.Optional(Num()),
  isComplete: Type.Optional(Type.Boolean()),
  sdkVersion: Type.Optional(Type.String()),
  modelsVersion: Type.Optional(Type.String()),
  ...METRICS,
  emotion: Type.Optional(Type.Unknown()),
  gaze: Type.Optional(Type.Unknown()),
  raw: Type.Optional(Raw),
  assessment: Type.Optional(Type.Unknown()),
});
export type Measurement = Static<typeof Measurement>;
export type MeasurementRaw = Static<typeof Raw>;
