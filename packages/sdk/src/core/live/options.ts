/** `StreamSession`'s options, delivery modes and states (re-exported by session.ts). */
import type { Logger } from '../clock.js';
import type { FetchLike, Sleep } from '../http/transport.js';
import type { SessionInfo } from '../types.js';
import type { WebSocketFactory } from './socket.js';

export type Delivery = 'stream' | 'batch' | 'auto';
export type SessionState =
  'idle' | 'connecting' | 'streaming' | 'buffering' | 'stopping' | 'uploading' | 'done' | 'aborted' | 'failed';

export interface StreamSessionOptions {
  /** What the backend handed over from `sessions.create` (token, id, wsUrl, maxDurationSec). */
  session: Pick<SessionInfo, 'sessionToken' | 'wsUrl'> & Partial<SessionInfo>;
  delivery?: Delivery;
  /** Base address of the fallback endpoints; defaults to the origin of `wsUrl`. */
  baseUrl?: string;
  webSocket?: WebSocketFactory;
  fetch?: FetchLike;
  /** Monotonic milliseconds for packet timestamps; defaults to `performance.now()`. */
  now?: () => number;
  sleep?: Sleep;
  logger?: Logger;
  /** Socket open + `ready` must happen within this. Default 10 s. */
  connectTimeoutMs?: number;
  /** After `stop`, `final` must arrive within this. Default 30 s. */
  finalTimeoutMs?: number;
  /** Batch result wait after a fallback upload. Default 5 minutes. */
  resultTimeoutMs?: number;
  resultPollMs?: number;
  /** A socket send buffer above this drops packets from the socket (they stay in the buffer). */
  maxSocketBufferedBytes?: number;
}
