/**
 * The WebSocket seam: the browser's `WebSocket` in the default entry, the `ws` package in the
 * Node entry. Only the `on*` handler properties common to both are used.
 */
import { fromBase64Url } from '@vitals/protocol';

export interface WebSocketLike {
  readonly readyState: number;
  readonly bufferedAmount: number;
  binaryType: string;
  send(data: any): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: any) => void) | null;
  onmessage: ((ev: any) => void) | null;
  onclose: ((ev: any) => void) | null;
  onerror: ((ev: any) => void) | null;
}

export type WebSocketFactory = (url: string) => WebSocketLike;

export const WS_OPEN = 1;

/** Closes a connecting or open socket; a socket already closing is left alone. */
export function closeQuietly(ws: WebSocketLike | undefined, code: number, reason: string): void {
  if (!ws) return;
  if (ws.readyState === WS_OPEN || ws.readyState === 0) {
    try {
      ws.close(code, reason);
    } catch {
      // already closing
    }
  }
}

/** The browser's (or runtime's) global WebSocket, if there is one. */
export function globalWebSocketFactory(): WebSocketFactory | undefined {
  const WS = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  return WS ? (url) => new WS(url) : undefined;
}

/** Token claims the client may read (spec: the token carries `sid` and `dur`); format not shown. */
export interface TokenClaims {
  sid?: string;
  dur?: number;
  [claim: string]: unknown;
}

/** Best-effort read of a dotted base64url token's JSON payload; never verifies anything. */
export function readTokenClaims(token: string): TokenClaims {
  for (const part of token.split('.')) {
    const bytes = fromBase64Url(part);
    if (!bytes || bytes.length < 2) continue;
    try {
      const obj = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
      if (obj && typeof obj === 'object' && ('sid' in obj || 'dur' in obj)) return obj as TokenClaims;
    } catch {
      // not this part
    }
  }
  return {};
}

/** `wss://host/prefix/...` → `https://host`: where the fallback endpoints live by default. */
export function httpBaseFromWsUrl(wsUrl: string): string {
  const u = new URL(wsUrl);
  const protocol = u.protocol === 'wss:' ? 'https:' : u.protocol === 'ws:' ? 'http:' : u.protocol;
  const prefix = u.pathname.includes('/sdk/v1') ? u.pathname.slice(0, u.pathname.indexOf('/sdk/v1')) : '';
  return `${protocol}//${u.host}${prefix}`;
}
