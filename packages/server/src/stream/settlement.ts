/**
 * How a streaming session is recorded on its job: completed with the final measurement (read back
 * as stored, for the `final` event), or failed/aborted with what the stream had processed.
 */
import type { EngineMeasurement } from '@vitals/engine';
import type { Measurement } from '../domain/measurement.js';
import type { AppContext } from '../context.js';
import { settleJob, type MeasurementFields } from '../domain/jobs.js';
import { getJob } from '../store/jobs.js';
import { getMeasurement } from '../store/measurements.js';

/** A session that ends without a measurement. */
export type Ending = { status: 'aborted' | 'failed'; code: string; message: string };

/** The stream's counters, as stored in the job's `stats.stream`. */
export interface StreamCounts {
  received: number;
  dropped: number;
  processed: number;
  auxDropped: number;
}

export function jobStats(stream: StreamCounts, m?: EngineMeasurement): Record<string, unknown> {
  return { stream, ...(m ? { engine: m.stats } : {}) };
}

/**
 * Settles the job completed and returns the stored measurement document; `undefined` when the job
 * was settled elsewhere first (superseded by a fallback job, which settles it aborted). A session's
 * job is completed only here, so a job found completed is this session's own earlier attempt whose
 * commit went through while its answer was lost (the connection dropped): its measurement is returned
 * instead of a second one being stored, which makes a retry after a store outage safe.
 */
export async function storeFinal(
  ctx: AppContext,
  sid: string,
  m: EngineMeasurement | undefined,
  fields: MeasurementFields,
  stats: Record<string, unknown>,
): Promise<Measurement | undefined> {
  const settled = await settleJob(ctx, sid, {
    status: 'completed',
    fields,
    framesProcessed: m?.stats.framesUsed ?? 0,
    secondsProcessed: m?.durationSec ?? 0,
    stats,
  });
  const row = await getJob(ctx.db.db, sid);
  if (!settled && row?.status !== 'completed') return undefined;
  const stored = row?.measurement_id ? await getMeasurement(ctx.db.db, row.key_id, row.measurement_id) : undefined;
  if (!stored) throw new Error('stored measurement not found after settlement');
  return stored.doc;
}

/** Settles the job failed or aborted; the seconds span the first to the last processed frame. */
export async function settleEnded(
  ctx: AppContext,
  sid: string,
  e: Ending,
  frames: { processed: number; firstT: number; lastProcessedT: number },
  stats: Record<string, unknown>,
): Promise<void> {
  await settleJob(ctx, sid, {
    status: e.status,
    code: e.code,
    message: e.message,
    framesProcessed: frames.processed,
    secondsProcessed: frames.processed > 1 ? (frames.lastProcessedT - frames.firstT) / 1e6 : 0,
    stats,
  });
}
