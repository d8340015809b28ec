/**
 * JSON schemas (TypeBox) for request bodies and resources. The server validates with them, the
 * OpenAPI document is generated from them, and the TypeScript types are derived from them, so the
 * three cannot drift. `x-error-code` names the spec's error code for a field whose failure has its
 * own code (e.g. `platform` → `invalid_platform`); every other failure is `validation_error`.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { USER_REF_PATTERN, VERSION_STRING_PATTERN, SHA256_HEX_PATTERN } from './limits.js';

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Num = (o: object = {}) => Type.Number(o);
/**
 * A string enum that stays `{type: 'string', enum: [...]}` in JSON Schema (so a failure is one
 * `enum` error carrying the field's `x-error-code`, where a union of literals would report `anyOf`)
 * while its static type is the union of its values.
 */
const StringEnum = <const T extends readonly string[]>(values: T, o: object = {}) =>
  Type.Unsafe<T[number]>(Type.String({ enum: [...values], ...o }));

export const UserRef = Type.String({ pattern: USER_REF_PATTERN, minLength: 1, maxLength: 64 });
export const VersionString = Type.String({ pattern: VERSION_STRING_PATTERN, minLength: 1, maxLength: 64 });

export const Quality = Type.Object({
  level: Type.Union([Type.Literal('good'), Type.Literal('fair'), Type.Literal('poor')]),
  score: Num({ minimum: 0, maximum: 1 }),
  usable: Type.Boolean(),
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

/** Body of POST /sdk/v1/measurements. Only `source` is required. */
export const MeasurementSubmission = Type.Object(
  {
    source: Type.String({ minLength: 1, maxLength: 32, pattern: '^[a-z][a-z0-9_]*$' }),
    durationSec: Type.Optional(Num({ minimum: 0, maximum: 3600 })),
    isComplete: Type.Optional(Type.Boolean()),
    sdkVersion: Type.Optional(VersionString),
    modelsVersion: Type.Optional(VersionString),
    quality: Type.Optional(Quality),
    cardiac: Type.Optional(Cardiac),
    hrv: Type.Optional(Nullable(Hrv)),
    respiratory: Type.Optional(Respiratory),
    stress: Type.Optional(Nullable(Stress)),
    bloodPressure: Type.Optional(Nullable(BloodPressure)),
    spo2: Type.Optional(Nullable(Spo2)),
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
  quality: Type.Optional(Quality),
  cardiac: Type.Optional(Cardiac),
  hrv: Type.Optional(Nullable(Hrv)),
  respiratory: Type.Optional(Respiratory),
  stress: Type.Optional(Nullable(Stress)),
  bloodPressure: Type.Optional(Nullable(BloodPressure)),
  spo2: Type.Optional(Nullable(Spo2)),
  emotion: Type.Optional(Type.Unknown()),
  gaze: Type.Optional(Type.Unknown()),
  raw: Type.Optional(Raw),
  assessment: Type.Optional(Type.Unknown()),
});
export type Measurement = Static<typeof Measurement>;
export type MeasurementRaw = Static<typeof Raw>;

export const JobStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('aborted'),
  Type.Literal('failed'),
  Type.Literal('expired'),
]);
/** Open objects: the documented fields, and room for more without a breaking change. */
const OPEN = { additionalProperties: true };
const Opt = <T extends TSchema>(t: T) => Type.Optional(t);

/** The engine's diagnostics for one capture (engine `EngineStats`; every field may be absent). */
export const EngineStats = Type.Object(
  {
    framesUsed: Opt(Type.Integer()),
    framesDropped: Opt(Type.Integer()),
    framesRejected: Opt(Type.Integer()),
    meanFps: Opt(Num()),
    sampleRateHz: Opt(Num()),
    medianSqi: Opt(Num()),
    skinFraction: Opt(Num()),
    pulseMethod: Opt(Type.String()),
    /** The chain's heart rate even when quality is poor: diagnostics only, never published then. */
    internalHeartRateBpm: Opt(Nullable(Num())),
    /** Capture-level pulse evidence the quality gate tests (docs/engine.md, Quality). */
    anchorShare: Opt(Nullable(Num())),
    beatsDetected: Opt(Type.Integer()),
    rrAcceptedFraction: Opt(Num()),
    telemetrySamples: Opt(Type.Integer()),
  },
  OPEN,
);
/** What the video tier saw in an uploaded video (partial when the video was rejected early). */
export const MediaStats = Type.Object(
  {
    durationSec: Opt(Num()),
    fps: Opt(Num()),
    width: Opt(Type.Integer()),
    height: Opt(Type.Integer()),
    codec: Opt(Type.String()),
    container: Opt(Type.String()),
    framesDecoded: Opt(Type.Integer()),
    framesWithFace: Opt(Type.Integer()),
    facePresence: Opt(Num()),
    medianFaceWidthPx: Opt(Num()),
    multipleFaces: Opt(Type.Boolean()),
    maxFacesSeen: Opt(Type.Integer()),
    detector: Opt(Type.String()),
  },
  OPEN,
);
/** A streaming session's packet counts at settlement. */
export const StreamStats = Type.Object(
  { received: Opt(Type.Integer()), dropped: Opt(Type.Integer()), processed: Opt(Type.Integer()), auxDropped: Opt(Type.Integer()) },
  OPEN,
);
/** `CloudJob.stats`: coarse progress while running; what each tier saw once settled. */
export const JobStats = Type.Object(
  {
    progress: Opt(Type.Object({ stage: Type.String(), fraction: Num({ minimum: 0, maximum: 1 }) }, OPEN)),
    engine: Opt(EngineStats),
    media: Opt(MediaStats),
    stream: Opt(StreamStats),
  },
  OPEN,
);
export type JobStats = Static<typeof JobStats>;

export const CloudJob = Type.Object({
  jobId: Type.String(),
  mode: Type.Union([Type.Literal('batch_frames'), Type.Literal('batch_video'), Type.Literal('stream')]),
  status: JobStatus,
  createdAt: Type.Integer(),
  startedAt: Type.Optional(Type.Integer()),
  finishedAt: Type.Optional(Type.Integer()),
  framesProcessed: Type.Integer(),
  secondsProcessed: Num(),
  measurementId: Type.Optional(Type.String()),
  measurement: Type.Optional(Measurement),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  userRef: Type.Optional(Type.String()),
  clientRef: Type.Optional(Type.String()),
  stats: Type.Optional(JobStats),
});
export type CloudJob = Static<typeof CloudJob>;

export const UserSummary = Type.Object({
  userRef: Type.String(),
  measurements: Type.Integer(),
  firstSeenAt: Type.Integer(),
  lastSeenAt: Type.Integer(),
  avgQuality: Nullable(Num()),
});
export type UserSummary = Static<typeof UserSummary>;

export const BaselineMetric = Type.Object({
  median: Num(),
  mad: Num(),
  low: Num(),
  high: Num(),
  unit: Type.String(),
  samples: Type.Integer(),
});
export type BaselineMetric = Static<typeof BaselineMetric>;
export const Baseline = Type.Object({
  userRef: Type.String(),
  status: Type.Union([Type.Literal('ok'), Type.Literal('insufficient_data')]),
  windowDays: Type.Integer(),
  minSamples: Type.Integer(),
  sampleCount: Type.Integer(),
  metrics: Type.Record(Type.String(), BaselineMetric),
  disclaimers: Type.Array(Type.String()),
});
export type Baseline = Static<typeof Baseline>;

export const UsageLogRow = Type.Object({
  id: Type.String(),
  time: Type.Integer(),
  endpoint: Type.String(),
  method: Type.String(),
  status: Type.Union([Type.Literal('success'), Type.Literal('unauthorized'), Type.Literal('rate_limited')]),
  latencyMs: Nullable(Type.Integer()),
  requestId: Type.String(),
  error: Nullable(Type.String()),
  errorCode: Nullable(Type.String()),
  qualityLevel: Nullable(Type.String()),
});
export type UsageLogRow = Static<typeof UsageLogRow>;

export const SessionCreate = Type.Object(
  {
    platform: StringEnum(['web', 'ios', 'android'], { 'x-error-code': 'invalid_platform' }),
    durationSec: Type.Number({ minimum: 20, maximum: 180, 'x-error-code': 'invalid_duration' }),
    consent: Type.Boolean({ const: true, 'x-error-code': 'consent_required' }),
    userRef: Type.Optional(UserRef),
    features: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
    clientRef: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
);
export type SessionCreate = Static<typeof SessionCreate>;

export const Session = Type.Object({
  sessionToken: Type.String(),
  sessionId: Type.String(),
  wsUrl: Type.String(),
  maxDurationSec: Type.Integer(),
  frameSpec: Type.Record(Type.String(), Type.Unknown()),
});
export type Session = Static<typeof Session>;

export const PresignRequest = Type.Object(
  {
    kind: StringEnum(['frames', 'video'], { 'x-error-code': 'invalid_kind' }),
    contentType: Type.Optional(Type.String({ maxLength: 100, 'x-error-code': 'invalid_content_type' })),
  },
  { additionalProperties: true },
);
export type PresignRequest = Static<typeof PresignRequest>;
export const Upload = Type.Object({
  uploadUrl: Type.String(),
  objectKey: Type.String(),
  expiresAt: Type.Integer(),
  contentType: Type.String(),
  maxBytes: Type.Integer(),
});
export type Upload = Static<typeof Upload>;

export const JobCreate = Type.Object(
  {
    objectKey: Type.String({ minLength: 1, maxLength: 200 }),
    kind: StringEnum(['frames', 'video'], { 'x-error-code': 'invalid_kind' }),
    sha256: Type.String({ pattern: SHA256_HEX_PATTERN }),
    idempotencyKey: Type.String({ minLength: 16, maxLength: 200 }),
    platform: Type.Optional(StringEnum(['web', 'ios', 'android', 'server'])),
    features: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
    consent: Type.Boolean({ const: true, 'x-error-code': 'consent_required' }),
    webhookUrl: Type.Optional(Type.String({ maxLength: 2048 })),
    clientRef: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    userRef: Type.Optional(UserRef),
    supersedes: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: true },
);
export type JobCreate = Static<typeof JobCreate>;

/** `POST /sdk/v1/auth/test`: the key's facts (field names: docs/decisions.md). */
export const AuthTestResult = Type.Object({
  keyId: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  mode: Type.Union([Type.Literal('live'), Type.Literal('test')]),
  features: Type.Array(Type.String()),
  /** Epoch ms, or null for a key that does not expire. */
  expiresAt: Nullable(Type.Integer()),
  limits: Type.Object({ rateLimitPerMin: Type.Integer(), logsPerMin: Type.Integer() }),
  quotas: Type.Object({
    /** Calendar month (UTC) the usage figures cover, `YYYY-MM`. */
    month: Type.String(),
    quotaSecondsMonth: Nullable(Type.Integer()),
    cloudSecondsUsed: Num(),
    tokenQuotaMonthUsd: Nullable(Num()),
    tokensUsedUsd: Num(),
  }),
  tokenBalanceUsd: Num(),
  organization: Nullable(Type.Object({ id: Type.String(), name: Type.String() })),
  /** The server clock, epoch ms (for checking the client's clock against the ±300 s window). */
  serverTime: Type.Integer(),
});
export type AuthTestResult = Static<typeof AuthTestResult>;

/** A page of `GET /sdk/v1/users`. */
export const UsersPage = Type.Object({ items: Type.Array(UserSummary), total: Type.Integer(), page: Type.Integer(), perPage: Type.Integer() });
export type UsersPage = Static<typeof UsersPage>;
/** A page of `GET /sdk/v1/users/{ref}/measurements`, newest first. */
export const UserMeasurementsPage = Type.Object({ items: Type.Array(Measurement), total: Type.Integer(), page: Type.Integer(), perPage: Type.Integer() });
export type UserMeasurementsPage = Static<typeof UserMeasurementsPage>;
/** A page of `GET /sdk/v1/logs`: oldest first; `nextCursor` continues after the last item (repeated on an empty page). */
export const LogsPage = Type.Object({ items: Type.Array(UsageLogRow), nextCursor: Type.String(), serverTime: Type.Integer() });
export type LogsPage = Static<typeof LogsPage>;

export function envelopeOf<T extends TSchema>(data: T) {
  return Type.Object({ ok: Type.Literal(true), data });
}
export const ErrorEnvelope = Type.Object({
  ok: Type.Literal(false),
  error: Type.Object({ code: Type.String(), message: Type.String() }),
});
