/**
 * Streaming sessions whose server process died (SIGKILL, a crash, an OOM kill): the socket dropped
 * with the process, so by the spec the session is `aborted` ("Socket drops → aborted"), but no
 * process is left to say so and the row stayed `running` for good (found by `npm run soak`, issue
 * 19). A live process ends every session within its duration + WALL_GRACE_MS of `ready` and then
 * retries the final store for under 8 s; a `running` session past that and ORPHAN_GRACE_MS more
 * belongs to nobody, and the sweep settles it `aborted` (`disconnected`), unmetered.
 */
import type { AppContext } from '../context.js';
import { settleJob } from '../domain/jobs.js';
import { WALL_GRACE_MS } from '../stream/limits.js';

export const ORPHAN_GRACE_MS = 60_000;

export async function settleOrphanedSessions(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  const rows = await ctx.db.db
    .selectFrom('cloud_jobs')
    .select(['id', 'started_at', 'duration_sec'])
    .where('mode', '=', 'stream')
    .where('status', '=', 'running')
    .where('started_at', '<', now - WALL_GRACE_MS - ORPHAN_GRACE_MS)
    .limit(500)
    .execute();
  let settled = 0;
  for (const r of rows) {
    const endBy = Number(r.started_at) + Number(r.duration_sec ?? 0) * 1000 + WALL_GRACE_MS + ORPHAN_GRACE_MS;
    if (endBy >= now) continue;
    const message = 'the server process handling the session ended';
    if (await settleJob(ctx, r.id, { status: 'aborted', code: 'disconnected', message })) settled++;
  }
  return settled;
}
