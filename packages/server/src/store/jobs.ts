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

/** A complete row for a new job or session: every column not given starts empty (null, 0). */
export function newJobRow(
  r: Pick<CloudJobsTable, 'id' | 'key_id' | 'org_id' | 'mode' | 'status' | 'created_at'> & Partial<CloudJobsTable>,
): CloudJobsTable {
  return {
    updated_at: r.created_at,
    started_at: null,
    finished_at: null,
    frames_processed: 0,
    seconds_processed: 0,
    measurement_id: null,
    error_code: null,
    error_message: null,
    user_ref: null,
    client_ref: null,
    platform: null,
    features: '[]',
    accepted_features: null,
    duration_sec: null,
    object_key: null,
    sha256: null,
    idempotency_key: null,
    webhook_url: null,
    supersedes: null,
    superseded_by: null,
    metered: 0,
    attempts: 0,
    lease_owner: null,
    lease_until: null,
    stats: null,
    ...r,
  };
}

export async function insertJob(db: Kysely<Database>, row: CloudJobsTable): Promise<void> {
  await db.insertInto('cloud_jobs').values(row).execute();
}

export async function getJob(db: Kysely<Database>, id: string): Promise<JobRow | undefined> {
  const r = await db.selectFrom('cloud_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  return r && normalize(r);
}

/** A job of one key; another key's job is indistinguishable from an unknown one. */
export async function getJobForKey(db: Kysely<Database>, keyId: string, id: string): Promise<JobRow | undefined> {
  const r = await db
    .selectFrom('cloud_jobs')
    .selectAll()
    .where('id', '=', id)
    .where('key_id', '=', keyId)
    .executeTakeFirst();
  return r && normalize(r);
}

export async function findByIdempotencyKey(
  db: Kysely<Database>,
  keyId: string,
  idem: string,
): Promise<JobRow | undefined> {
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
