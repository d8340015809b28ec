/**
 * How a session ends without a `final` (spec: Streaming error codes): a fatal `error` event, the
 * job settled failed or aborted, the socket closed; or the socket went away first; or the server
 * shuts down. A session settles only if it reached `running`.
 */
import type { StreamErrorCode } from '@vitals/protocol';
import type { EngineMeasurement } from '@vitals/engine';
import type { StreamConnection } from './connection.js';
import { CLOSE } from './limits.js';
import { closeSocket, sendRaw } from './outbound.js';
import { jobStats, settleEnded, type Ending } from './settlement.js';
import type { Refusal } from './handshake.js';

/** A fatal error: `error` event, the session settles (failed or aborted), the socket closes. */
export function fatal(
  c: StreamConnection,
  code: StreamErrorCode,
  message: string,
  closeCode: number,
  settle = true,
): void {
  if (c.phase === 'closed') return;
  sendRaw(c, { t: 'error', code, message, fatal: true });
  const status = code === 'idle_timeout' ? 'aborted' : 'failed';
  end(c, settle ? { status, code, message } : undefined, closeCode);
}

export function refuse(c: StreamConnection, r: Refusal): void {
  fatal(c, r.code, r.message, r.closeCode);
}

export function internal(c: StreamConnection, err: unknown): void {
  c.deps.log.error({ err, sessionId: c.claims?.sid }, 'streaming session failed');
  fatal(c, 'internal_error', 'internal error', CLOSE.internal);
}

export function end(c: StreamConnection, ending: Ending | undefined, closeCode: number): void {
  const wasLive = c.phase === 'running' || c.phase === 'finishing';
  c.phase = 'closed';
  c.queue.clear();
  c.estimator = undefined;
  closeSocket(c, closeCode);
  if (ending && wasLive) void settle(c, ending);
}

export function onSocketClose(c: StreamConnection): void {
  if (c.phase === 'running') {
    c.phase = 'closed';
    c.queue.clear();
    c.estimator = undefined;
    void settle(c, c.socketError ?? { status: 'aborted', code: 'disconnected', message: 'socket closed without stop' });
  } else if (c.phase === 'hello' || c.phase === 'authorizing') {
    c.phase = 'closed';
  }
  // `finishing` continues: the client asked to stop, the measurement is stored either way.
  c.deps.onEnd();
}

/** Server shutdown: the session ends without a result (no resume in v1). */
export async function shutdown(c: StreamConnection): Promise<void> {
  if (c.phase === 'closed') return;
  const wasLive = c.phase === 'running' || c.phase === 'finishing';
  c.phase = 'closed';
  c.queue.clear();
  c.estimator = undefined;
  sendRaw(c, { t: 'error', code: 'internal_error', message: 'server shutting down', fatal: true });
  c.ws.close(CLOSE.goingAway, 'server shutting down');
  if (wasLive) await settle(c, { status: 'aborted', code: 'disconnected', message: 'server shut down' });
  c.deps.onEnd();
}

export async function settle(c: StreamConnection, e: Ending): Promise<void> {
  if (!c.claims) return;
  try {
    await settleEnded(c.deps.ctx, c.claims.sid, e, c, streamJobStats(c));
  } catch (err) {
    c.deps.log.error({ err, sessionId: c.claims.sid }, 'settling a streaming session failed');
  }
}

/** The job's `stats`: the stream's counters, and the engine's when a measurement was made. */
export function streamJobStats(c: StreamConnection, m?: EngineMeasurement): Record<string, unknown> {
  return jobStats(
    { received: c.received, dropped: c.dropped, processed: c.processed, auxDropped: c.aux?.dropped ?? 0 },
    m,
  );
}
