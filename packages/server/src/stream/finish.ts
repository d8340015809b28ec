/**
 * `stop`, or the token's duration reached (spec: Streaming events): every queued frame is
 * processed, the final measurement is stored, `final` carries it as stored, the socket closes.
 * `duration_exceeded` and `insufficient_signal` are non-fatal errors sent before it.
 *
 * A store that cannot answer (store/unavailable.ts: SQLITE_BUSY, PostgreSQL away or timing out) is
 * given STORE_RETRY_MS to come back before the session ends in `internal_error` (the streaming
 * vocabulary has nothing closer): the measurement is computed once and would otherwise be lost to a
 * blip of a second. The client keeps waiting for `final`; a client that closes meanwhile still has
 * the measurement stored (GET the job or the measurement).
 */
import type { StreamConnection } from './connection.js';
import { emptyFields, isPoor, toFields } from './final-measurement.js';
import { CLOSE } from './limits.js';
import { closeSocket, send } from './outbound.js';
import { storeFinal } from './settlement.js';
import { fatal, internal, streamJobStats } from './endings.js';
import { isStoreUnavailable } from '../store/unavailable.js';

/** Waits between attempts to store the final measurement while the store is unavailable (7.75 s in all). */
export const STORE_RETRY_MS = [250, 500, 1000, 2000, 4000];

export async function finish(c: StreamConnection, reason: 'stop' | 'duration'): Promise<void> {
  if (c.phase !== 'running') return;
  c.phase = 'finishing';
  const { ctx } = c.deps;
  try {
    if (reason === 'duration')
      send(c, {
        t: 'error',
        code: 'duration_exceeded',
        message: `session reached its ${c.claims!.dur} s; frames past it are ignored`,
        fatal: false,
      });
    while (c.drain(Infinity));
    const m = c.processed > 0 ? c.estimator!.finish() : undefined;
    c.estimator = undefined;
    const fields = m ? toFields(m, c.auxAgg) : emptyFields();
    if (!m || isPoor(m))
      send(c, {
        t: 'error',
        code: 'insufficient_signal',
        message: 'not enough signal for a measurement',
        fatal: false,
      });
    const stats = streamJobStats(c, m);
    const doc = await withStoreRetries(c, () => storeFinal(ctx, c.claims!.sid, m, fields, stats));
    if (!doc) {
      fatal(
        c,
        'session_already_used',
        'the session was settled elsewhere (superseded by a fallback job)',
        CLOSE.policy,
        false,
      );
      return;
    }
    send(c, { t: 'final', measurementId: doc.id, measurement: doc });
    closeSocket(c, CLOSE.normal);
  } catch (err) {
    internal(c, err);
  }
}

async function withStoreRetries<T>(c: StreamConnection, attempt: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      // Shutdown (phase `closed`) settles the session itself; past the last wait the outage is not a blip.
      if (!isStoreUnavailable(err) || i >= STORE_RETRY_MS.length || c.phase !== 'finishing') throw err;
      c.deps.log.warn(
        { err, sessionId: c.claims?.sid, retryInMs: STORE_RETRY_MS[i] },
        'storing the final measurement: store unavailable, retrying',
      );
      await new Promise((r) => setTimeout(r, STORE_RETRY_MS[i]));
    }
  }
}
