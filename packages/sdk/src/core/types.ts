/**
 * Wire shapes of the interface spec (section "Resources and their fields"), derived from the
 * protocol's TypeBox schemas (`@vitals/protocol` schemas.ts: the server validates and serializes
 * with them and generates its OpenAPI document from them), so the SDK cannot drift from the server.
 * Where the SDK type was open (`[extra: string]: unknown`), it stays open so additive server fields
 * type-check. The SDK narrows a few protocol types where the schema's static type is wider than its
 * values (e.g. `status` enums); an `interface ... extends` keeps every narrowing assignable to the
 * protocol type, so the compiler rejects one that contradicts the schema.
 * Only types are imported: the core stays free of runtime dependencies on the schemas.
 */
import type * as P from '@vitals/protocol';
import type { Feature } from '@vitals/protocol';

export type QualityLevel = NonNullable<P.Measurement['quality']>['level'];
/** One quality reason: a stable code, a hint for the person, the measured value (docs/engine.md, "Quality reasons"). */
export type QualityReason = P.QualityReason;
export type QualityReasonCode = P.QualityReasonCode;

/** The stored measurement as returned (protocol `Measurement`). */
export interface Measurement extends P.Measurement {
  /** Present only with `include=assessment`; its shape is the server's (spec: not shown). */
  assessment?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** Body of `POST /sdk/v1/measurements` (protocol `MeasurementSubmission`): the result shape; `source` is required. */
export interface MeasurementInput extends P.MeasurementSubmission {
  [extra: string]: unknown;
}

export type JobStatus = 'pending' | 'queued' | 'running' | 'completed' | 'aborted' | 'failed' | 'expired';
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'aborted', 'expired'];
export function isTerminalStatus(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

/** A job or streaming session's diagnostics (protocol `JobStats`: progress while running, then what each tier saw). */
export type JobStats = P.JobStats;

/** A job or streaming session as returned (protocol `CloudJob`). */
export interface CloudJob extends P.CloudJob {
  /** The protocol schema's static type is `string`; these are its values. */
  status: JobStatus;
  measurement?: Measurement;
  [extra: string]: unknown;
}

/** Body of `POST /sdk/v1/cloud/jobs` (protocol `JobCreate`, with its enums as literal types). */
export interface CreateJobInput extends P.JobCreate {
  kind: 'frames' | 'video';
  consent: true;
  platform?: 'web' | 'ios' | 'android' | 'server';
  features?: Feature[] | string[];
}

/** Answer of `POST /sdk/v1/uploads/presign` (protocol `Upload`). */
export interface Upload extends P.Upload {
  /** A credential: never log it, put it in errors or hand it to third parties. */
  uploadUrl: string;
}

/** Body of `POST /sdk/v1/uploads/presign` (protocol `PresignRequest`, with its enum as a literal type). */
export interface PresignInput extends P.PresignRequest {
  kind: 'frames' | 'video';
  contentType?: 'application/octet-stream' | 'video/mp4' | 'video/quicktime' | 'video/webm' | string;
}

/** Body of `POST /sdk/v1/cloud/sessions` (protocol `SessionCreate`, with its enums as literal types). */
export interface CreateSessionInput extends P.SessionCreate {
  platform: 'web' | 'ios' | 'android';
  consent: true;
  features?: Feature[] | string[];
  [extra: string]: unknown;
}

/** Answer of `POST /sdk/v1/cloud/sessions` (protocol `Session`). */
export interface SessionInfo extends P.Session {
  /** What a client must send; fields beyond `padRatio` are the server's (docs/streaming.md). */
  frameSpec: { padRatio: number; [extra: string]: unknown };
  [extra: string]: unknown;
}

/** One end user of the key (protocol `UserSummary`); `avgQuality` is null when no measurement has a quality score. */
export type UserSummary = P.UserSummary;

/** A page of `GET /sdk/v1/users` or `/users/{ref}/measurements` (protocol `UsersPage` / `UserMeasurementsPage`, generic here). */
export interface Page<T> {
  items: T[];
  total?: number;
  page?: number;
  perPage?: number;
  [extra: string]: unknown;
}

export type BaselineMetric = P.BaselineMetric;

/** The metrics a baseline may carry (`Baseline.metrics` keys). */
export type BaselineMetricName =
  | 'heartRateBpm'
  | 'rmssdMs'
  | 'sdnnMs'
  | 'breathingRate'
  | 'stressIndex'
  | 'systolicMmHg'
  | 'diastolicMmHg'
  | 'spo2Pct';

/** A user's personal baseline (protocol `Baseline`, with the metric names spelled out). */
export interface Baseline extends P.Baseline {
  metrics: Partial<Record<BaselineMetricName, BaselineMetric>>;
}

/** One row of the usage log (protocol `UsageLogRow`). */
export interface UsageLogRow extends P.UsageLogRow {
  /** The protocol schema's static type is `string | null`; the server stores the measurement's quality level. */
  qualityLevel: QualityLevel | null;
}

/** A page of `GET /sdk/v1/logs` (protocol `LogsPage`). */
export interface LogsPage extends P.LogsPage {
  items: UsageLogRow[];
}

/** `POST /sdk/v1/auth/test`: the key's facts (protocol `AuthTestResult`; field names in docs/decisions.md). */
export interface AuthTestResult extends P.AuthTestResult {
  [extra: string]: unknown;
}
