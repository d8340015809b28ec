/**
 * The one owner of a session's WebSocket on the way out (spec: Streaming events): JSON messages,
 * best-effort live events, and the close. It knows nothing of the session's phase: the session
 * (session.ts) decides what may still be sent and when the socket closes.
 */
import type { WebSocket } from 'ws';
import { CLOSE, MAX_OUTBOUND_BYTES } from './limits.js';

export class SessionSocket {
  constructor(private readonly ws: WebSocket) {}

  send(obj: object): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(obj));
  }

  /** Live events are best effort: skipped while the client does not read its socket. */
  sendLive(obj: object): void {
    if (this.ws.bufferedAmount > MAX_OUTBOUND_BYTES) return;
    this.send(obj);
  }

  close(code: number): void {
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code);
  }

  /** Server shutdown. */
  goAway(): void {
    this.ws.close(CLOSE.goingAway, 'server shutting down');
  }
}
