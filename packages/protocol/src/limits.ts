/** Every limit of the interface spec as a named constant (spec: Limits; CLARIFICATIONS 5). */

export const PROTOCOL_VERSION = 1;

// Signature layer
export const SIGNATURE_WINDOW_SEC = 300;
export const NONCE_MIN_LENGTH = 8;
export const NONCE_MAX_LENGTH = 128;

// Streaming session
export const CLOUD_MIN_DURATION_SEC = 20;
export const CLOUD_MAX_DURATION_SEC = 180;
export const STREAM_IDLE_TIMEOUT_SEC = 10;
export const STREAM_MAX_FPS = 32;
export const WS_MAX_MESSAGE_BYTES = 8192;
export const CONNECTIONS_PER_TOKEN = 1;
export const SESSION_TOKEN_TTL_SEC = 300;
export const STREAM_QUEUE_FRAMES = 15;
export const AUX_REASSEMBLY_TIMEOUT_MS = 2000;
export const CLIENT_DEFAULT_MAX_DURATION_SEC = 60;
/** The streaming `hr` event is emitted only while the signal-quality index is above this. */
export const HR_EVENT_MIN_SQI = 0.38;

// Uploads and batch
export const FRAMES_MAX_BYTES = 67108864;
export const VIDEO_MAX_BYTES = 268435456;
export const PRESIGN_TTL_SEC = 900;
export const UPLOAD_TTL_SEC = 3600;
export const IDEMPOTENCY_KEY_MIN = 16;
export const IDEMPOTENCY_KEY_MAX = 200;
export const VIDEO_MIN_FPS = 20;
export const VIDEO_MIN_DURATION_SEC = 20;
/**
 * Longest video measured: one hour, as for a frames file's header. Not in the spec's limits table
 * (docs/decisions.md "Batch and uploads"); a longer video fails `unsupported_media`.
 */
export const VIDEO_MAX_DURATION_SEC = 3600;
export const VIDEO_MIN_FACE_PRESENCE = 0.7;
export const VIDEO_MIN_FACE_WIDTH_PX = 100;
export const JOB_WEBHOOK_ATTEMPTS = 3;

// Rate limits
export const FALLBACK_UPLOADS_PER_WINDOW = 6;
export const FALLBACK_UPLOAD_WINDOW_SEC = 600;
export const FALLBACK_RESULT_PER_MIN = 60;
export const LOGS_PER_MIN = 60;

// Other constants
export const ORG_WEBHOOK_LIMIT = 5;
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
export const USER_REF_MAX = 64;
export const PAGE_SIZE_MIN = 1;
export const PAGE_SIZE_MAX = 100;
export const PAGE_SIZE_DEFAULT = 20;
export const LOGS_LIMIT_MIN = 1;
export const LOGS_LIMIT_MAX = 200;
export const LOGS_LIMIT_DEFAULT = 50;
export const BASELINE_WINDOW_DAYS = 30;
export const BASELINE_MIN_SAMPLES = 5;
export const BASELINE_CAP = 200;
export const VERSION_STRING_MAX = 64;

// Published at /api/v1/limits (values not shown in the spec: docs/decisions.md)
export const KEY_RATE_LIMIT_PER_MIN_MAX = 10_000;
export const MEASUREMENT_BASE_DURATION_SEC = 60;
export const EXPORT_ROW_CAP = 10_000;
export const MAX_WINDOW_DAYS = 90;

/** The eight constants of `GET /api/v1/limits`, with their real values (CLARIFICATIONS 6). */
export const PUBLIC_LIMITS = {
  keyRateLimitPerMinMax: KEY_RATE_LIMIT_PER_MIN_MAX,
  orgWebhookLimit: ORG_WEBHOOK_LIMIT,
  webhookAttempts: JOB_WEBHOOK_ATTEMPTS,
  measurementBaseDurationSec: MEASUREMENT_BASE_DURATION_SEC,
  cloudMinDurationSec: CLOUD_MIN_DURATION_SEC,
  cloudMaxDurationSec: CLOUD_MAX_DURATION_SEC,
  exportRowCap: EXPORT_ROW_CAP,
  maxWindowDays: MAX_WINDOW_DAYS,
} as const;

// Formats
export const USER_REF_PATTERN = '^[A-Za-z0-9._:@-]{1,64}$';
export const VERSION_STRING_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._+-]*$';
export const SHA256_HEX_PATTERN = '^[0-9a-f]{64}$';

export const FEATURES = ['hrv', 'bp', 'spo2', 'emotion', 'gaze'] as const;
export type Feature = (typeof FEATURES)[number];
export const PLATFORMS_SESSION = ['web', 'ios', 'android'] as const;
export const PLATFORMS_JOB = ['web', 'ios', 'android', 'server'] as const;
export const UPLOAD_KINDS = ['frames', 'video'] as const;
export type UploadKind = (typeof UPLOAD_KINDS)[number];
export const VIDEO_CONTENT_TYPES = ['video/mp4', 'video/quicktime', 'video/webm'] as const;
export const FRAMES_CONTENT_TYPE = 'application/octet-stream';
