/**
 * The error vocabulary of the interface spec (section "Errors"): one table from code to HTTP
 * status, used by the server's single error handler, the SDK's ApiError and the CLI's exit codes.
 */

/** HTTP error codes of the spec, plus the few it leaves "not shown" (see docs/decisions.md). */
export const ERROR_STATUS = {
  validation_error: 400,
  invalid_platform: 400,
  invalid_duration: 400,
  consent_required: 400,
  invalid_kind: 400,
  invalid_content_type: 400,
  unauthorized: 401,
  key_disabled: 403,
  token_quota_exceeded: 403,
  insufficient_tokens: 403,
  quota_exceeded: 403,
  // Not shown in the spec: a feature the key may not use (docs/decisions.md).
  feature_not_allowed: 403,
  // Not shown: a console call refused for what it is, not who sends it (a cross-site state change,
  // purchases the operator has not enabled; docs/console.md), and a browser request from another
  // origin to a route that serves its own page only (the demo backend; docs/decisions.md, "The demo").
  forbidden: 403,
  // Not shown: session-token failures on the HTTP fallback endpoints mirror the stream codes.
  token_invalid: 401,
  token_expired: 401,
  object_not_found: 404,
  // Not shown: the code of the plain 404 for an unknown or foreign resource.
  not_found: 404,
  idempotency_conflict: 409,
  // Not shown: a state change that the resource's state forbids (e.g. fallback on a finished session).
  conflict: 409,
  // Not shown: the request did not arrive in full within the HTTP server's request timeout.
  request_timeout: 408,
  object_too_large: 413,
  // Not shown: a request body over the route's size limit.
  payload_too_large: 413,
  // Not shown: the request's headers are over the HTTP server's limit (16 KB), refused before routing.
  headers_too_large: 431,
  sha256_mismatch: 422,
  rate_limited: 429,
  internal_error: 500,
  cloud_unavailable: 503,
  // Not shown: the service's database is slow, saturated or down; sent with `Retry-After` (seconds).
  // Not `cloud_unavailable`, which is about cloud inference (docs/decisions.md, "Store outages").
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export function isErrorCode(code: string): code is ErrorCode {
  return Object.prototype.hasOwnProperty.call(ERROR_STATUS, code);
}

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}

/** The usage log's `errorCode` vocabulary: exactly these ten values (spec: Errors). */
export const USAGE_ERROR_CODES = [
  'missing_credentials',
  'invalid_nonce',
  'invalid_timestamp',
  'timestamp_out_of_window',
  'unknown_key',
  'key_disabled',
  'key_expired',
  'invalid_signature',
  'nonce_reused',
  'rate_limited',
] as const;
export type UsageErrorCode = (typeof USAGE_ERROR_CODES)[number];

/** Streaming `error` event codes (spec: Streaming error codes). */
export const STREAM_ERROR_CODES = [
  'token_invalid',
  'token_expired',
  'session_already_used',
  'protocol_error',
  'frame_rate_exceeded',
  'duration_exceeded',
  'idle_timeout',
  'insufficient_signal',
  'internal_error',
] as const;
export type StreamErrorCode = (typeof STREAM_ERROR_CODES)[number];

/** Video rejections: job `error.code` for `batch_video`, checked in this order (CLARIFICATIONS 22). */
export const VIDEO_REJECTION_CODES = [
  'unsupported_media',
  'too_short',
  'insufficient_frame_rate',
  'face_not_detected',
  'face_too_small',
] as const;
export type VideoRejectionCode = (typeof VIDEO_REJECTION_CODES)[number];

/**
 * Job `error.code` values beyond the video rejections (not shown in the spec; docs/decisions.md):
 * a frames file whose header or packets are wrong, a superseded job, an internal failure.
 */
export const JOB_ERROR_CODES = [
  ...VIDEO_REJECTION_CODES,
  'invalid_frames_file',
  'superseded',
  'internal_error',
  'object_expired',
  'disconnected',
  'aborted_by_client',
  'idle_timeout',
  'duration_exceeded',
  'frame_rate_exceeded',
  'protocol_error',
] as const;
export type JobErrorCode = (typeof JOB_ERROR_CODES)[number];

/** CLI exit codes (spec: Command-line exit codes). */
export const EXIT_CODES = {
  success: 0,
  unexpected: 1,
  usage: 2,
  unauthorized: 3,
  refused: 4,
  jobNotCompleted: 5,
  timeout: 6,
  rateLimited: 7,
} as const;

/** The wire envelope. */
export interface SuccessEnvelope<T> {
  ok: true;
  data: T;
}
export interface FailureEnvelope {
  ok: false;
  error: { code: string; message: string };
}
export type Envelope<T> = SuccessEnvelope<T> | FailureEnvelope;
