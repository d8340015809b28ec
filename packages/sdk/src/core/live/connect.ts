/**
 * Opening the session's socket (spec: Streaming protocol): `hello` with the token once it opens
 * (the token travels in the first message, never in the URL), then `ready`. A fatal `error`, a
 * close or the timeout before `ready` rejects with a StreamError.
 */
import { PROTOCOL_VERSION } from '@vitals/protocol';
import { StreamError } from '../errors.js';
import { SERVER_EVENT_TYPES, type ReadyEvent, type StreamEvent } from './events.js';
import type { WebSocketFactory, WebSocketLike } from './socket.js';

/** What the session does as the socket moves; the handlers stay for the socket's lifetime. */
export interface ConnectHooks {
  /** The socket exists (it has not opened yet). */
  created(ws: WebSocketLike): void;
  opened(): void;
  closed(code: number, reason: string): void;
  /** Every server event, `ready` included, except a fatal `error` that rejects the connect. */
  event(e: StreamEvent): void;
  /** The fatal `error` that rejects the connect: listeners see it first. */
  refused(e: StreamEvent): void;
  /** The connect failed: close the socket, if there is one. */
  failed(): void;
}

export interface ConnectTarget {
  factory: WebSocketFactory;
  wsUrl: string;
  sessionToken: string;
  timeoutMs: number;
}

export function connectSocket(
  { factory, wsUrl, sessionToken, timeoutMs }: ConnectTarget,
  hooks: ConnectHooks,
): Promise<ReadyEvent> {
  return new Promise<ReadyEvent>((resolve, reject) => {
    let settled = false;
    const fail = (code: string, message: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      hooks.failed();
      reject(new StreamError(code, message));
    };
    const timer = setTimeout(() => fail('connect_timeout', 'no ready in time'), timeoutMs);
    let ws: WebSocketLike;
    try {
      ws = factory(wsUrl);
    } catch (err) {
      return fail('connect_failed', err instanceof Error ? err.message : String(err));
    }
    hooks.created(ws);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => {
      hooks.opened();
      ws.send(JSON.stringify({ t: 'hello', protocol: PROTOCOL_VERSION, token: sessionToken }));
    };
    ws.onerror = () => undefined; // the close that follows carries the outcome
    ws.onclose = (ev: { code?: number; reason?: string }) => {
      hooks.closed(ev.code ?? 1006, String(ev.reason ?? ''));
      fail('connect_failed', `socket closed before ready (${ev.code ?? 1006})`);
    };
    ws.onmessage = (ev: { data: unknown }) => {
      const event = parseEvent(ev.data);
      if (!event) return;
      if (event.t === 'ready' && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(event as ReadyEvent);
      } else if (event.t === 'error' && !settled && (event as { fatal?: boolean }).fatal !== false) {
        hooks.refused(event);
        return fail(
          String((event as { code?: unknown }).code ?? 'stream_error'),
          String((event as { message?: unknown }).message ?? ''),
        );
      }
      hooks.event(event);
    };
  });
}

/** A server event we know, or `undefined` (binary data, bad JSON, an unknown `t`). */
export function parseEvent(data: unknown): StreamEvent | undefined {
  if (typeof data !== 'string') return undefined;
  try {
    const obj = JSON.parse(data) as { t?: unknown };
    return typeof obj.t === 'string' && SERVER_EVENT_TYPES.has(obj.t) ? (obj as StreamEvent) : undefined;
  } catch {
    return undefined;
  }
}
