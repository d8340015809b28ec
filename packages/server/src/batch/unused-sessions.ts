/**
 * Streaming sessions minted (`POST /sdk/v1/cloud/sessions`) whose socket never connected stayed
 * `pending` for good. The spec leaves the move from `pending` unshown; once no door can still use
 * the session (its token's TTL for the socket, then the fallback's grace: the session's duration
 * plus 10 minutes, batch/fallback.ts) and UNUSED_SESSION_GRACE_MS more for a fallback upload still
 * streaming in, the sweep settles it `expired` (`token_expired`), unmetered (docs/decisions.md,
 * "Cloud streaming"). A fallback upload arriving later still makes its job; supersede() then only
 * records the link, as for any settled session.
 */
import type { AppContext } from '../context.js';
import { settleJob } from '../domain/jobs.js';
import { FALLBACK_GRACE_EXTRA_SEC } from '../domain/session-token.js';

export const UNUSED_SESSION_GRACE_MS = 60_000;
/** The schema's longest session (durationSec 20..180), for a row without a duration. */
const MAX_DURATION_SEC = 180;

/** The last moment a session minted at `createdAt` for `durationSec` could still be used. */
export function unusedSessionDeadline(ctx: AppContext, createdAt: number, durationSec: number): number {
  const windowSec = ctx.config.sessionTokenTtlSec + durationSec + FALLBACK_GRACE_EXTRA_SEC;
  return createdAt + windowSec * 1000 + UNUSED_SESSION_GRACE_MS;
}

export async function expireUnusedSessions(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  const rows = await ctx.db.db
    .selectFrom('cloud_jobs')
    .select(['id', 'created_at', 'duration_sec'])
    .where('mode', '=', 'stream')
    .where('status', '=', 'pending')
    // The shortest window first (any duration); each row's own duration is checked below.
    .where('created_at', '<', now - unusedSessionDeadline(ctx, 0, 0))
    .limit(500)
    .execute();
  let expired = 0;
  for (const r of rows) {
    const dur = Number(r.duration_sec ?? MAX_DURATION_SEC);
    if (unusedSessionDeadline(ctx, Number(r.created_at), dur) >= now) continue;
    const message = 'the session never connected before its token expired';
    if (await settleJob(ctx, r.id, { status: 'expired', code: 'token_expired', message })) expired++;
  }
  return expired;
}
