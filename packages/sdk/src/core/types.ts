/**
 * Wire shapes of the interface spec (section "Resources and their fields"). Fields the spec leaves
 * "not shown" are open (`[extra: string]: unknown`) so additive server changes type-check.
 */
import type { Feature } from '@vitals/protocol';

export type QualityLevel = 'good' | 'fair' | 'poor';

export interface Measurement {
  id: string;
  keyId: string;
  requestId?: string;
  userRef?: string;
  origin: 'on_device' | 'cloud';
  attested: boolean;
  source: string;
  durationSec?: number;
  isComplete?: boolean;
  sdkVersion?: string;
  modelsVersion?: string;
  quality?: { level: QualityLevel; score: number; usable: boolean };
  cardiac?: { heartRate: { value: number; unit: 'bpm'; confidence: number } | null } | null;
  hrv?: { sdnnMs: number; rmssdMs: number; pnn50Pct: number } | null;
  respiratory?: { breathingRate: { value: number; unit: 'brpm' } | null } | null;
  stress?: { index: number; level: string; unit: 'index' } | null;
  bloodPressure?: {
    systolicMmHg: number;
    diastolicMmHg: number;
    unit: 'mmHg';
    confidence: number;
    tier: string;
  } | null;
  spo2?: { value: number; unit: '%'; confidence: number; tier: string } | null;
  raw?: { rrIntervalsMs: number[]; ppgSignal: number[]; sampleRateHz: number };
  assessment?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** Body of `POST /sdk/v1/measurements`: the result shape; `source` is required. */
export interface MeasurementInput {
  source: string;
  durationSec?: number;
  isComplete?: boolean;
  sdkVersion?: string;
  modelsVersion?: string;
  quality?: Measurement['quality'];
  cardiac?: Measurement['cardiac'];
  hrv?: Measurement['hrv'];
  respiratory?: Measurement['respiratory'];
  stress?: Measurement['stress'];
  bloodPressure?: Measurement['bloodPressure'];
  spo2?: Measurement['spo2'];
  userRef?: string;
  includeAdvanced?: boolean;
  raw?: Measurement['raw'];
  [extra: string]: unknown;
}

export type JobStatus = 'pending' | 'queued' | 'running' | 'completed' | 'aborted' | 'failed' | 'expired';
export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'aborted', 'expired'];
export function isTerminalStatus(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

export interface CloudJob {
  jobId: string;
  mode?: 'batch_frames' | 'batch_video' | 'stream';
  status: JobStatus;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  framesProcessed?: number;
  secondsProcessed?: number;
  measurementId?: string;
  measurement?: Measurement;
  error?: { code: string; message: string };
  userRef?: string;
  [extra: string]: unknown;
}

export interface CreateJobInput {
  objectKey: string;
  kind: 'frames' | 'video';
  sha256: string;
  idempotencyKey: string;
  consent: true;
  platform?: 'web' | 'ios' | 'android' | 'server';
  features?: Feature[] | string[];
  webhookUrl?: string;
  clientRef?: string;
  userRef?: string;
  supersedes?: string;
}

export interface Upload {
  /** A credential: never log it, put it in errors or hand it to third parties. */
  uploadUrl: string;
  objectKey: string;
  expiresAt: number;
  contentType: string;
  maxBytes: number;
}

export interface PresignInput {
  kind: 'frames' | 'video';
  contentType?: 'application/octet-stream' | 'video/mp4' | 'video/quicktime' | 'video/webm' | string;
}

export interface CreateSessionInput {
  platform: 'web' | 'ios' | 'android';
  durationSec: number;
  consent: true;
  userRef?: string;
  features?: Feature[] | string[];
  [extra: string]: unknown;
}

export interface SessionInfo {
  sessionToken: string;
  sessionId: string;
  wsUrl: string;
  maxDurationSec?: number;
  frameSpec?: { padRatio: number; [extra: string]: unknown };
  [extra: string]: unknown;
}

export interface UserSummary {
  userRef: string;
  measurements: number;
  firstSeenAt: number;
  lastSeenAt: number;
  avgQuality: number;
}

export interface Page<T> {
  items: T[];
  total?: number;
  [extra: string]: unknown;
}

export interface BaselineMetric {
  median: number;
  mad: number;
  low: number;
  high: number;
  unit: string;
  samples: number;
}

export interface Baseline {
  userRef: string;
  status: 'ok' | 'insufficient_data';
  windowDays: number;
  minSamples: number;
  sampleCount: number;
  metrics: Partial<
    Record<
      | 'heartRateBpm'
      | 'rmssdMs'
      | 'sdnnMs'
      | 'breathingRate'
      | 'stressIndex'
      | 'systolicMmHg'
      | 'diastolicMmHg'
      | 'spo2Pct',
      BaselineMetric
    >
  >;
  disclaimers: string[];
}

export interface UsageLogRow {
  id: string;
  time: number;
  endpoint: string;
  method: string;
  status: 'success' | 'unauthorized' | 'rate_limited';
  latencyMs: number | null;
  requestId: string;
  error: string | null;
  errorCode: string | null;
  qualityLevel: QualityLevel | null;
}

export interface LogsPage {
  items: UsageLogRow[];
  nextCursor: string;
  serverTime: number;
}

/** `POST /sdk/v1/auth/test`: the key's facts. Exact field names are the server's (spec: not shown). */
export interface AuthTestResult {
  [field: string]: unknown;
}
