/**
 * Messages to the client (spec: Streaming events): every send is a no-op once the session is
 * closed, except the one fatal `error` that precedes the close; live events are best effort.
 */
import type { StreamConnection } from './connection.js';
import { MAX_OUTBOUND_BYTES } from './limits.js';

export function send(c: StreamConnection, obj: object): void {
  if (c.phase === 'closed') return;
  sendRaw(c, obj);
}

/** Also after `closed`: the fatal `error` a closing session still owes its client. */
export function sendRaw(c: StreamConnection, obj: object): void {
  if (c.ws.readyState === c.ws.OPEN) c.ws.send(JSON.stringify(obj));
}

/** Live events are best effort: skipped while the client does not read its socket. */
export function sendLive(c: StreamConnection, obj: object): void {
  if (c.ws.bufferedAmount > MAX_OUTBOUND_BYTES) return;
  send(c, obj);
}

/** `stats`: the backlog spans the last processed (or oldest queued) frame to the newest queued. */
export function sendStats(c: StreamConnection, now: number): void {
  c.lastStatsAt = now;
  const newest = c.queue.newest()?.tMicros ?? c.lastProcessedT;
  const from = c.lastProcessedT >= 0 ? c.lastProcessedT : (c.queue.oldest()?.tMicros ?? newest);
  const backlogMs = Math.max(0, Math.round((newest - from) / 1000));
  send(c, { t: 'stats', received: c.received, dropped: c.dropped, backlogMs, processed: c.processed });
}

export function closeSocket(c: StreamConnection, code: number): void {
  c.phase = 'closed';
  if (c.ws.readyState === c.ws.OPEN || c.ws.readyState === c.ws.CONNECTING) c.ws.close(code);
}
