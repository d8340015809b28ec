/**
 * The WebSocket endpoint: `ws` in noServer mode on the HTTP server's `upgrade` event at
 * STREAM_PATH (spec: Streaming protocol). permessage-deflate is off; the 8 KB message cap is
 * enforced per message by the connection (so it can answer `protocol_error` first), and `ws`
 * refuses anything over twice that before buffering it. One ticker drives every connection's
 * timers; server shutdown ends every session (aborted, `disconnected`) and closes the sockets.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { WS_MAX_MESSAGE_BYTES } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { StreamConnection } from './connection.js';
import { endedSessions, settledCheck } from './settled-elsewhere.js';
import type { SessionLog, StreamSession } from './session.js';
import { FrameScheduler } from './scheduler.js';
import { STREAM_PATH } from './paths.js';

/** `ws` drops larger messages itself (close 1009) without buffering them. */
export const WS_HARD_CAP_BYTES = 2 * WS_MAX_MESSAGE_BYTES;
const TICK_MS = 250;
/** Sockets per process; more get HTTP 503 at the upgrade. */
const MAX_CONNECTIONS = 5000;

export class StreamHub {
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: WS_HARD_CAP_BYTES,
    clientTracking: false,
  });
  /** The sessions of this hub's open sockets (each owned by its StreamConnection's inbound path). */
  private readonly sessions = new Set<StreamSession>();
  private readonly scheduler = new FrameScheduler();
  private readonly ticker: NodeJS.Timeout;
  private closing?: Promise<void>;
  /** Removes this hub's settlement listener (on close); then the cross-process check's state. */
  private readonly stopListening: () => void;
  private lastSettledCheck = 0;
  private checkingSettled = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly log: SessionLog,
  ) {
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
    // A session of this app settled by another path in this process (a fallback upload superseded it).
    this.stopListening = ctx.settlements.on('end a session settled elsewhere', (job) => {
      if (job.mode !== 'stream') return;
      for (const c of this.sessions) if (c.sessionId === job.id) c.settledElsewhere();
    });
  }

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.onUpgrade(server, req, socket, head),
    );
  }

  get size(): number {
    return this.sessions.size;
  }

  private onUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // The query string is ignored (a token there is never read; CLARIFICATIONS 27).
    const path = (req.url ?? '').split('?')[0];
    if (path !== STREAM_PATH) {
      if (server.listenerCount('upgrade') === 1) refuse(socket, 404, 'Not Found');
      return;
    }
    if (this.closing) return refuse(socket, 503, 'Service Unavailable');
    if (this.sessions.size >= MAX_CONNECTIONS) return refuse(socket, 503, 'Service Unavailable');
    this.wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const { session } = new StreamConnection(ws, {
        ctx: this.ctx,
        scheduler: this.scheduler,
        log: this.log,
        onEnd: () => this.sessions.delete(session),
      });
      this.sessions.add(session);
    });
  }

  private tick(): void {
    const now = this.ctx.clock.now();
    for (const c of this.sessions) {
      try {
        c.tick(now);
      } catch (err) {
        this.log.error({ err }, 'stream tick failed');
      }
    }
    const wall = Date.now();
    if (wall - this.lastSettledCheck >= settledCheck.intervalMs && !this.checkingSettled) {
      this.lastSettledCheck = wall;
      void this.checkSettledElsewhere();
    }
  }

  /** One query for every running session of this hub (another process may have settled one). */
  private async checkSettledElsewhere(): Promise<void> {
    const running = new Map<string, StreamSession>();
    for (const c of this.sessions) if (c.phase === 'running' && c.sessionId) running.set(c.sessionId, c);
    if (running.size === 0) return;
    this.checkingSettled = true;
    try {
      for (const id of await endedSessions(this.ctx.db.db, [...running.keys()])) running.get(id)!.settledElsewhere();
    } catch (err) {
      this.log.error({ err }, 'checking for sessions settled elsewhere failed');
    } finally {
      this.checkingSettled = false;
    }
  }

  /** Ends every session and closes every socket; idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.ticker);
      this.stopListening();
      await Promise.all([...this.sessions].map((c) => c.shutdown()));
      this.sessions.clear();
      await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    })();
    return this.closing;
  }
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.write(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}
