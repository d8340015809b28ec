/** Cloud jobs and streaming sessions: creation bodies, the job resource and its diagnostics. */
import { Type, type Static } from '@sinclair/typebox';
import { SHA256_HEX_PATTERN } from '../limits.js';
import { Measurement, UserRef } from './measurement.js';
import { Nullable, Num, OPEN, Opt, StringEnum } from './shared.js';

export const JobStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('aborted'),
  Type.Literal('failed'),
  Type.Literal('expired'),
]);

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
  {
    received: Opt(Type.Integer()),
    dropped: Opt(Type.Integer()),
    processed: Opt(Type.Integer()),
    auxDropped: Opt(Type.Integer()),
  },
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
