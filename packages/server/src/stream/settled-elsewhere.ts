/**
 * A running session can be settled by someone else: a session-fallback upload supersedes it
 * (batch/fallback.ts → supersede.ts) while its socket is still open, in this process or, with
 * PostgreSQL, in another one. The socket is then told at once instead of at `stop` or the idle
 * timeout: `error session_already_used` (fatal; the job keeps the status the other party gave it)
 * and close 1008 (StreamSession.settledElsewhere). In this process through the app's settlement
 * listeners (domain/settlement-events.ts), across processes by one query every
 * `settledCheck.intervalMs` for all of this hub's running sessions (hub.ts).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { LIVE_STATUSES } from '../store/jobs.js';

/** The fatal `error`'s message when another party settled the session. */
export const SETTLED_ELSEWHERE = 'the session was settled elsewhere (superseded by a fallback job)';

/** How often the hub asks the database whether any of its running sessions ended elsewhere (tests may change it). */
export const settledCheck = { intervalMs: 2000 };

/** Of these session ids, the ones no longer live in the database. */
export async function endedSessions(db: Kysely<Database>, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('cloud_jobs')
    .select('id')
    .where('id', 'in', ids)
    .where('status', 'not in', [...LIVE_STATUSES])
    .execute();
  return rows.map((r) => r.id);
}
