/**
 * Job life cycle shared by the streaming and batch tiers: the wire view of a job, settlement
 * (store the measurement, move to a terminal status exactly once, meter once), quota checks at
 * creation. What follows a settlement (webhooks, object deletion) listens on ctx.settlements.
 */
import type { Kysely } from 'kysely';
import type { CloudJob, Measurement } from '@vitals/protocol';
import { newMeasurementId } from '../ids.js';
import type { Database } from '../store/schema.js';
import { getJob, isTerminal, transitionJob, LIVE_STATUSES, patchJob, type JobRow } from '../store/jobs.js';
import { getMeasurement, insertMeasurement } from '../store/measurements.js';
import { addMonthUsage, getMonthUsage, monthOf } from '../store/metering.js';
import { drawDownTokenBalance, getOrg, type KeyRecord } from '../store/orgs-keys.js';
import { balanceCovers } from './balance.js';
import { costMicro } from './pricing.js';
import { ApiError } from '../errors.js';
import type { AppContext } from '../context.js';

/** The engine's result fields that become the stored measurement (packages/engine EngineMeasurement). */
export interface MeasurementFields {
  durationSec: number;
  isComplete: boolean;
  quality: Measurement['quality'];
  cardiac?: Measurement['cardiac'];
  hrv?: Measurement['hrv'];
  respiratory?: Measurement['respiratory'];
  stress?: Measurement['stress'];
  bloodPressure?: Measurement['bloodPressure'];
  spo2?: Measurement['spo2'];
  emotion?: unknown;
  gaze?: unknown;
  raw?: Measurement['raw'];
}

export type Settlement =
  | {
      status: 'completed';
      fields: MeasurementFields;
      framesProcessed: number;
      secondsProcessed: number;
      stats?: unknown;
    }
  | {
      status: 'failed' | 'aborted' | 'expired';
      code: string;
      message: string;
      framesProcessed?: number;
      secondsProcessed?: number;
      stats?: unknown;
    };

const FEATURE_FIELDS: Record<string, keyof MeasurementFields> = {
  hrv: 'hrv',
  bp: 'bloodPressure',
  spo2: 'spo2',
  emotion: 'emotion',
  gaze: 'gaze',
};

/** Keeps core metrics and only the ordered features; unordered fields are absent (CLARIFICATIONS 4). */
export function filterFeatures(fields: MeasurementFields, accepted: readonly string[]): MeasurementFields {
  const out: MeasurementFields = { ...fields };
  for (const [feature, field] of Object.entries(FEATURE_FIELDS)) {
    if (!accepted.includes(feature)) delete out[field];
  }
  return out;
}

export async function jobToWire(db: Kysely<Database>, row: JobRow): Promise<CloudJob> {
  const job: CloudJob = {
    jobId: row.id,
    mode: row.mode as CloudJob['mode'],
    status: row.status as CloudJob['status'],
    createdAt: row.created_at,
    framesProcessed: row.frames_processed,
    secondsProcessed: row.seconds_processed,
  };
  if (row.started_at !== null) job.startedAt = row.started_at;
  if (row.finished_at !== null) job.finishedAt = row.finished_at;
  if (row.user_ref) job.userRef = row.user_ref;
  if (row.client_ref) job.clientRef = row.client_ref;
  if (row.error_code) job.error = { code: row.error_code, message: row.error_message ?? row.error_code };
  if (row.status === 'completed' && row.measurement_id) {
    job.measurementId = row.measurement_id;
    const m = await getMeasurement(db, row.key_id, row.measurement_id);
    if (m) job.measurement = m.doc;
  }
  if (row.stats) job.stats = JSON.parse(row.stats);
  return job;
}

/**
 * Settles a job exactly once. The measurement (when completed) is stored first, then the job is
 * moved from a live status with a compare-and-set; the call that wins also meters. A losing call
 * (the job was already settled or superseded) returns false and leaves no trace.
 */
export async function settleJob(ctx: AppContext, jobId: string, s: Settlement): Promise<boolean> {
  const db = ctx.db.db;
  const row = await getJob(db, jobId);
  if (!row || isTerminal(row.status)) return false;
  const now = ctx.clock.now();
  const common = {
    finished_at: now,
    updated_at: now,
    frames_processed: s.framesProcessed ?? row.frames_processed,
    seconds_processed: round3(s.secondsProcessed ?? row.seconds_processed),
    stats: s.stats === undefined ? row.stats : JSON.stringify(s.stats),
    lease_owner: null,
    lease_until: null,
  };
  if (s.status !== 'completed') {
    const moved = await transitionJob(db, jobId, LIVE_STATUSES, {
      ...common,
      status: s.status,
      error_code: s.code,
      error_message: s.message,
    });
    if (moved) await runAfterSettle(ctx, jobId);
    return moved;
  }

  const accepted = JSON.parse(row.accepted_features ?? row.features) as string[];
  const fields = filterFeatures(s.fields, accepted);
  const measurementId = newMeasurementId();
  const m: Measurement = {
    id: measurementId,
    keyId: row.key_id,
    requestId: row.id,
    origin: 'cloud',
    attested: true,
    source: row.mode === 'stream' ? 'cloud_stream' : row.mode === 'batch_video' ? 'cloud_video' : 'cloud_frames',
    createdAt: now,
  };
  if (row.user_ref) m.userRef = row.user_ref;
  Object.assign(m, fields);
  const raw = m.raw ?? null;
  delete m.raw;
  const moved = await db.transaction().execute(async (trx) => {
    const ok = await transitionJob(trx, jobId, LIVE_STATUSES, {
      ...common,
      status: 'completed',
      measurement_id: measurementId,
      metered: 1,
    });
    if (!ok) return false;
    await insertMeasurement(trx, m, raw, row.org_id, now);
    // Metering happens in the same transaction as the move: a job is charged once or not at all.
    const tokens = costMicro(common.seconds_processed, accepted);
    await addMonthUsage(trx, row.key_id, monthOf(now), common.seconds_processed, tokens);
    await drawDownTokenBalance(trx, row.org_id, tokens);
    return true;
  });
  if (moved) await runAfterSettle(ctx, jobId);
  return moved;
}

/** Tells this context's listeners (domain/settlement-events.ts); their failures are reported there. */
async function runAfterSettle(ctx: AppContext, jobId: string): Promise<void> {
  const job = await getJob(ctx.db.db, jobId);
  if (job) await ctx.settlements.emit(job);
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/**
 * Checks run when a session or job is created (spec: Errors 403 codes): monthly cloud seconds,
 * the key's monthly token cap, and the organization's balance against the cost of `estimateSec`
 * (only for a metered organization: CLARIFICATIONS 28, domain/balance.ts).
 */
export async function assertCanSpend(
  ctx: AppContext,
  key: KeyRecord,
  estimateSec: number,
  features: readonly string[],
): Promise<void> {
  const usage = await getMonthUsage(ctx.db.db, key.id, monthOf(ctx.clock.now()));
  if (key.quotaSecondsMonth !== null && usage.cloudSeconds >= key.quotaSecondsMonth)
    throw new ApiError('quota_exceeded', 'monthly cloud-seconds quota exhausted');
  if (key.tokenQuotaMonthMicro !== null && usage.tokensMicro >= key.tokenQuotaMonthMicro)
    throw new ApiError('token_quota_exceeded', "the key's monthly token cap is exhausted");
  const org = await getOrg(ctx.db.db, key.orgId);
  const cost = costMicro(estimateSec, features);
  if (!org || !balanceCovers(org, cost))
    throw new ApiError('insufficient_tokens', 'organization token balance cannot cover the measurement');
}

export { patchJob };
