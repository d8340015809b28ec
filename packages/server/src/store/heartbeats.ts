/**
 * Worker heartbeats (migration 005): each running worker keeps one row fresh, and deletes it when it
 * stops, so any process on the same store can tell whether a worker is alive (batch/heartbeat.ts).
 */
import { type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Records that worker `id` is alive at `now` (upsert; SQLite and PostgreSQL alike). */
export async function beat(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db
    .insertInto('worker_heartbeats')
    .values({ id, started_at: now, beat_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ beat_at: now }))
    .execute();
}

/** A stopping worker leaves at once rather than after its heartbeat goes stale. */
export async function forgetWorker(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('worker_heartbeats').where('id', '=', id).execute();
}

/**
 * Workers whose last beat is at or after `since`. Rows older than `pruneBefore` (workers that died
 * without stopping) are deleted on the way, so the table stays the size of the fleet.
 */
export async function countLiveWorkers(db: Kysely<Database>, since: number, pruneBefore: number): Promise<number> {
  await db.deleteFrom('worker_heartbeats').where('beat_at', '<', pruneBefore).execute();
  const row = await db
    .selectFrom('worker_heartbeats')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('beat_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
