/** Cloud jobs and streaming sessions (one table; see migrations/002-jobs.ts). */
import type { Kysely, Selectable, Updateable } from 'kysely';
import type { CloudJobsTable, Database } from './schema.js';

export type JobRow = Selectable<CloudJobsTable>;
export type JobPatch = Updateable<CloudJobsTable>;

export const TERMINAL_STATUSES = ['completed', 'aborted', 'failed', 'expired'] as const;
export const LIVE_STATUSES = ['pending', 'queued', 'running'] as const;
export type JobStatus = (typeof LIVE_STATUSES)[number] | (typeof TERMINAL_STATUSES)[number];

export function isTerminal(status: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}

const normalize = (r: JobRow): JobRow => ({
  ...r,
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
  started_at: r.started_at === null ? null : Number(r.started_at),
  finished_at: r.finished_at === null ? null : Number(r.finished_at),
  frames_processed: Number(r.frames_processed),
  seconds_processed: Number(r.seconds_processed),
  duration_sec: r.duration_sec === null ? null : Number(r.duration_sec),
  metered: Number(r.metered),
  attempts: Number(r.attempts),
  lease_until: r.lease_until === null ? null : Number(r.lease_until),
});

export async function insertJob(db: Kysely<Database>, row: CloudJobsTable): Promise<void> {
  await db.insertInto('cloud_jobs').values(row).execute();
}

export async function getJob(db: Kysely<Database>, id: string): Promise<JobRow | undefined> {
  const r = await db.selectFrom('cloud_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  return r && normalize(r);
}

/** A job of one key; another key's job is indistinguishable from an unknown one. */
export async function getJobForKey(db: Kysely<Database>, keyId: string, id: string): Promise<JobRow | undefined> {
  const r = await db.selectFrom('cloud_jobs').selectAll().where('id', '=', id).where('key_id', '=', keyId).executeTakeFirst();
  return r && normalize(r);
}

export async function findByIdempotencyKey(db: Kysely<Database>, keyId: string, idem: string): Promise<JobRow | undefined> {
  const r = await db
    .selectFrom('cloud_jobs')
    .selectAll()
    .where('key_id', '=', keyId)
    .where('idempotency_key', '=', idem)
    .executeTakeFirst();
  return r && normalize(r);
}

/**
 * Moves a job only if it is in one of `from`: the compare-and-set that makes every transition
 * happen once, whichever process or socket races for it. Returns whether this call moved it.
 */
export async function transitionJob(
  db: Kysely<Database>,
  id: string,
  from: readonly string[],
  patch: JobPatch,
): Promise<boolean> {
  const res = await db
    .updateTable('cloud_jobs')
    .set(patch)
    .where('id', '=', id)
    .where('status', 'in', [...from])
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function patchJob(db: Kysely<Database>, id: string, patch: JobPatch): Promise<void> {
  await db.updateTable('cloud_jobs').set(patch).where('id', '=', id).execute();
}
