/**
 * `stop`, or the token's duration reached (spec: Streaming events): every queued frame is
 * processed, the final measurement is stored, `final` carries it as stored, the socket closes.
 * `duration_exceeded` and `insufficient_signal` are non-fatal errors sent before it.
 */
import type { StreamConnection } from './connection.js';
import { emptyFields, isPoor, toFields } from './final-measurement.js';
import { CLOSE } from './limits.js';
import { closeSocket, send } from './outbound.js';
import { storeFinal } from './settlement.js';
import { fatal, internal, streamJobStats } from './endings.js';

export async function finish(c: StreamConnection, reason: 'stop' | 'duration'): Promise<void> {
  if (c.phase !== 'running') return;
  c.phase = 'finishing';
  const { ctx } = c.deps;
  try {
    if (reason === 'duration')
      send(c, { t: 'error', code: 'duration_exceeded', message: `session reached its ${c.claims!.dur} s; frames past it are ignored`, fatal: false });
    while (c.drain(Infinity));
    const m = c.processed > 0 ? c.estimator!.finish() : undefined;
    c.estimator = undefined;
    const fields = m ? toFields(m, c.auxAgg) : emptyFields();
    if (!m || isPoor(m)) send(c, { t: 'error', code: 'insufficient_signal', message: 'not enough signal for a measurement', fatal: false });
    const doc = await storeFinal(ctx, c.claims!.sid, m, fields, streamJobStats(c, m));
    if (!doc) {
      fatal(c, 'session_already_used', 'the session was settled elsewhere (superseded by a fallback job)', CLOSE.policy, false);
      return;
    }
    send(c, { t: 'final', measurementId: doc.id, measurement: doc });
    closeSocket(c, CLOSE.normal);
  } catch (err) {
    internal(c, err);
  }
}
