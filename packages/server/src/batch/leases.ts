/**
 * Leases on batch jobs (columns lease_owner, lease_until, attempts of `cloud_jobs`). A worker runs a
 * job only after winning `claimJob`, a compare-and-set: a queued job, or a running one whose lease
 * ran out because its worker died. The owner renews the lease while it works; settlement
 * (domain/jobs.ts settleJob) is itself a compare-and-set, so a job settles once even if a slow
 * former owner finishes after a new one.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

export const BATCH_MODES = ['batch_frames', 'batch_video'] as const;

export async function claimJob(
  db: Kysely<Database>,
  id: string,
  owner: string,
  now: number,
  leaseMs: number,
): Promise<boolean> {
  const res = await db
    .updateTable('cloud_jobs')
    .set({
      status: 'running',
      lease_owner: owner,
      lease_until: now + leaseMs,
      attempts: sql`attempts + 1`,
      started_at: sql`coalesce(started_at, ${now})`,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('mode', 'in', [...BATCH_MODES])
    .where((eb) =>
      eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Extends the lease; false when this owner no longer holds the job (taken over, or settled). */
export async function renewLease(
  db: Kysely<Database>,
  id: string,
  owner: string,
  now: number,
  leaseMs: number,
  stats?: string,
): Promise<boolean> {
  const res = await db
    .updateTable('cloud_jobs')
    .set({ lease_until: now + leaseMs, updated_at: now, ...(stats === undefined ? {} : { stats }) })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Jobs a worker may claim now: queued ones, and running ones whose lease ran out. */
export async function claimableJobs(
  db: Kysely<Database>,
  now: number,
  limit = 50,
): Promise<Array<{ id: string; status: string }>> {
  return db
    .selectFrom('cloud_jobs')
    .select(['id', 'status'])
    .where('mode', 'in', [...BATCH_MODES])
    .where((eb) =>
      eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]),
    )
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** How many jobs wait for a worker: queued, or running under a lapsed lease (batch/heartbeat.ts). */
export async function countWaitingJobs(db: Kysely<Database>, now: number): Promise<number> {
  const row = await db
    .selectFrom('cloud_jobs')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('mode', 'in', [...BATCH_MODES])
    .where((eb) =>
      eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_until', '<', now)])]),
    )
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
