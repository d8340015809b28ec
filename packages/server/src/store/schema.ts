/** Table types for Kysely. Timestamps are epoch milliseconds; booleans are 0/1 integers on both dialects. */

export interface OrgsTable {
  id: string;
  name: string;
  /** Organization token balance in micro-dollars; only meaningful when `metered` is 1. */
  token_balance_micro: number;
  /** 0: unmetered, the balance was never set (CLARIFICATIONS 28); 1: the balance is checked (migration 005). */
  metered: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  org_id: string;
  secret_sha256: string;
  status: string; // active | disabled
  mode: string; // live | test
  features: string; // JSON array of allowed features
  rate_limit_per_min: number;
  quota_seconds_month: number | null;
  token_quota_month_micro: number | null;
  expires_at: number | null;
  created_at: number;
}

export interface NoncesTable {
  key_id: string;
  nonce: string;
  expires_at: number;
}

export interface UsageLogTable {
  id: string;
  key_id: string | null;
  time: number;
  endpoint: string;
  method: string;
  status: string;
  latency_ms: number | null;
  request_id: string;
  error: string | null;
  error_code: string | null;
  quality_level: string | null;
}

export interface MeasurementsTable {
  id: string;
  key_id: string;
  org_id: string;
  user_ref: string | null;
  request_id: string;
  origin: string;
  created_at: number;
  /** The measurement document without `raw` (JSON). */
  doc: string;
  /** The raw block (JSON) when persisted with the advanced opt-in. */
  raw: string | null;
  quality_level: string | null;
  quality_score: number | null;
  usable: number;
  is_complete: number;
  heart_rate_bpm: number | null;
  rmssd_ms: number | null;
  sdnn_ms: number | null;
  breathing_rate: number | null;
  stress_index: number | null;
  systolic_mmhg: number | null;
  diastolic_mmhg: number | null;
  spo2_pct: number | null;
}

export interface UsageMonthTable {
  key_id: string;
  month: string; // YYYY-MM (UTC)
  cloud_seconds: number;
  tokens_micro: number;
}

export interface SettingsTable {
  name: string;
  value: string;
}

export interface CloudJobsTable {
  id: string;
  key_id: string;
  org_id: string;
  mode: string; // batch_frames | batch_video | stream
  status: string; // pending | queued | running | completed | aborted | failed | expired
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  frames_processed: number;
  seconds_processed: number;
  measurement_id: string | null;
  error_code: string | null;
  error_message: string | null;
  user_ref: string | null;
  client_ref: string | null;
  platform: string | null;
  /** JSON array: the features requested (after filtering to known names). */
  features: string;
  /** JSON array: the features the node accepted (emotion/gaze stripped without weights). */
  accepted_features: string | null;
  duration_sec: number | null;
  object_key: string | null;
  sha256: string | null;
  idempotency_key: string | null;
  webhook_url: string | null;
  supersedes: string | null;
  superseded_by: string | null;
  /** 1 once the job's seconds and tokens were charged: charging happens exactly once. */
  metered: number;
  attempts: number;
  lease_owner: string | null;
  lease_until: number | null;
  /** JSON object: job statistics (media stats, last quality packet, drops...). */
  stats: string | null;
}

/** A presigned object (migrations/003-batch.ts); the bytes live in the object store. */
export interface UploadsTable {
  object_key: string;
  key_id: string;
  org_id: string;
  kind: string; // frames | video
  content_type: string;
  max_bytes: number;
  created_at: number;
  /** When the upload URL stops working (presign + 15 min). */
  url_expires_at: number;
  /** When the object is swept (presign + 1 h), whatever its job's status. */
  expires_at: number;
  uploaded_at: number | null;
  size: number | null;
  /** SHA-256 of the stored bytes, computed while writing. */
  sha256: string | null;
  /** The job the object was given to (one object, one job). */
  job_id: string | null;
  deleted_at: number | null;
}

export interface WebhookEndpointsTable {
  id: string;
  org_id: string;
  url: string;
  /** Hex SHA-256 of the `whsec_` secret: the HMAC key of deliveries (spec: Job webhooks). */
  secret_sha256: string;
  status: string; // active | disabled
  created_at: number;
  rotated_at: number | null;
}

export interface WebhookDeliveriesTable {
  id: string; // whd_
  target: string; // job (per-job webhookUrl) | endpoint (organization endpoint)
  endpoint_id: string | null;
  org_id: string;
  key_id: string | null;
  job_id: string | null;
  event: string;
  url: string;
  status: string; // pending | succeeded | failed
  attempts: number;
  max_attempts: number;
  next_attempt_at: number | null;
  lease_until: number | null;
  last_status_code: number | null;
  last_error: string | null;
  last_response_ms: number | null;
  redelivery_of: string | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  at: number;
  ok: number;
  status_code: number | null;
  error: string | null;
  response_ms: number | null;
  remote_address: string | null;
}

/** One row per running worker (migration 005; batch/heartbeat.ts). */
export interface WorkerHeartbeatsTable {
  /** The worker's owner id (host:pid:random, batch/worker.ts). */
  id: string;
  started_at: number;
  beat_at: number;
}

export interface Database {
  orgs: OrgsTable;
  api_keys: ApiKeysTable;
  nonces: NoncesTable;
  usage_log: UsageLogTable;
  measurements: MeasurementsTable;
  usage_month: UsageMonthTable;
  settings: SettingsTable;
  cloud_jobs: CloudJobsTable;
  uploads: UploadsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  worker_heartbeats: WorkerHeartbeatsTable;
}
