/**
 * The state and internals of `StreamSession` (session.ts), which adds the public API on top: packet
 * timing and delivery (socket, pre-`ready` queue, local buffer), the socket's lifecycle, the switch
 * to the batch fallback, and `stop()`'s delivery over the socket or through the fallback.
 */
import { CLIENT_DEFAULT_MAX_DURATION_SEC } from '@vitals/protocol';
import { consoleLogger, type Logger } from '../clock.js';
import { StreamError } from '../errors.js';
import { FramesWriter } from '../frames/frames-file.js';
import { HttpClient, defaultSleep, resolveHttpConfig } from '../http/transport.js';
import { EventHub, type FinalEvent, type ReadyEvent, type StreamEvent } from './events.js';
import { SessionFallback, deliverFrames } from './fallback.js';
import {
  closeQuietly,
  globalWebSocketFactory,
  httpBaseFromWsUrl,
  readTokenClaims,
  type WebSocketLike,
} from './socket.js';
import { connectSocket } from './connect.js';
import { waitForFinal, type FinalWait } from './final-wait.js';
import type { Delivery, SessionState, StreamSessionOptions } from './options.js';

/** Packets over the socket wait in memory until `ready`; beyond this many they are dropped. */
const MAX_PRE_READY_PACKETS = 300;

export abstract class StreamSessionBase {
  readonly delivery: Delivery;
  readonly sessionId: string;
  readonly maxDurationSec: number;
  protected readonly hub = new EventHub();
  private readonly buffer: FramesWriter | undefined;
  private readonly fallback: SessionFallback;
  protected readonly now: () => number;
  private readonly logger: Logger;
  protected socket: WebSocketLike | undefined;
  protected socketAlive = false;
  protected ready: ReadyEvent | undefined;
  private preReady: Uint8Array[] = [];
  private t0: number | undefined;
  protected seq = 0;
  private lastTMicros = 0;
  protected stopPromise: Promise<FinalEvent> | undefined;
  protected fallbackReason: string | undefined;
  protected finalEvent: FinalEvent | undefined;
  private finalReceived = false;
  protected pendingPings: ((rttMs: number) => void)[] = [];
  protected _state: SessionState = 'idle';
  /** Packets not put on the socket (send buffer full, or before `ready` overflow). */
  socketDropped = 0;

  constructor(private readonly opts: StreamSessionOptions) {
    this.delivery = opts.delivery ?? 'auto';
    const claims = readTokenClaims(opts.session.sessionToken);
    const sid = opts.session.sessionId ?? claims.sid;
    if (!sid) throw new StreamError('config_error', 'sessionId is required (not in the session object nor the token)');
    this.sessionId = sid;
    this.maxDurationSec = opts.session.maxDurationSec ?? claims.dur ?? CLIENT_DEFAULT_MAX_DURATION_SEC;
    this.now = opts.now ?? (() => globalThis.performance?.now() ?? Date.now());
    this.logger = opts.logger ?? consoleLogger;
    if (this.delivery !== 'stream') this.buffer = new FramesWriter();
    const config = resolveHttpConfig({
      baseUrl: opts.baseUrl ?? httpBaseFromWsUrl(opts.session.wsUrl),
      fetch: opts.fetch,
      sleep: opts.sleep ?? defaultSleep,
      logger: this.logger,
    });
    const http = new HttpClient(config, { kind: 'bearer', token: opts.session.sessionToken });
    this.fallback = new SessionFallback(http, sid, { sleep: config.sleep, clock: config.clock });
  }

  // ---- internals ----

  protected timeOf(tMicros: number | undefined): number | undefined {
    if (this._state === 'done' || this._state === 'aborted' || this._state === 'failed' || this.stopPromise)
      return undefined;
    const now = this.now();
    this.t0 ??= now;
    const t = Math.max(0, Math.round(tMicros ?? (now - this.t0) * 1000));
    // The token caps the duration; frames past it would only earn `duration_exceeded`.
    if (t > this.maxDurationSec * 1e6) return undefined;
    if (t > this.lastTMicros) this.lastTMicros = t;
    return t;
  }

  protected emitPacket(bytes: Uint8Array, isFrame: boolean): boolean {
    this.buffer?.addPacket(bytes);
    if (this.delivery === 'batch' || this.fallbackReason) return true;
    if (!this.ready) {
      if (this.preReady.length < MAX_PRE_READY_PACKETS) this.preReady.push(bytes);
      else this.socketDropped++;
      return true;
    }
    return this.sendOnSocket(bytes) || !isFrame || this.buffer !== undefined;
  }

  private sendOnSocket(bytes: Uint8Array): boolean {
    if (!this.socketAlive || !this.socket) return false;
    if (this.socket.bufferedAmount > (this.opts.maxSocketBufferedBytes ?? 1 << 20)) {
      this.socketDropped++;
      return false;
    }
    this.socket.send(bytes);
    return true;
  }

  protected flushPreReady(): void {
    const queued = this.preReady;
    this.preReady = [];
    for (const p of queued) this.sendOnSocket(p);
  }

  protected connect(): Promise<ReadyEvent> {
    const factory = this.opts.webSocket ?? globalWebSocketFactory();
    if (!factory) return Promise.reject(new StreamError('no_websocket', 'no WebSocket implementation available'));
    const { wsUrl, sessionToken } = this.opts.session;
    return connectSocket(
      { factory, wsUrl, sessionToken, timeoutMs: this.opts.connectTimeoutMs ?? 10_000 },
      {
        created: (ws) => (this.socket = ws),
        opened: () => (this.socketAlive = true),
        closed: (code, reason) => this.onSocketClosed(code, reason),
        event: (e) => this.onServerEvent(e),
        refused: (e) => this.hub.emit(e),
        failed: () => this.closeSocket(1000, 'connect failed'),
      },
    );
  }

  private onServerEvent(event: StreamEvent): void {
    if (event.t === 'pong') this.pendingPings.shift()?.(0);
    if (event.t === 'error' && event.fatal !== false) this.lastFatal = event;
    if (event.t === 'final') {
      this.finalReceived = true;
      // Emitted by stop() once it resolves, with `via` filled in.
      this.finalWait?.final({ ...event, via: 'stream' });
      return;
    }
    this.hub.emit(event);
  }

  private finalWait: FinalWait | undefined;
  private lastFatal: { code: string; message: string } | undefined;

  private onSocketClosed(code: number, reason: string): void {
    const wasAlive = this.socketAlive;
    this.socketAlive = false;
    if (!wasAlive && code === 1006 && !this.ready) return;
    this.hub.emit({ t: 'close', code, reason });
    if (!this.finalReceived && this.delivery === 'auto' && this._state !== 'aborted') {
      this.switchToFallback(`socket closed before final (${code})`);
    }
    this.finalWait?.closed();
  }

  protected switchToFallback(reason: string): void {
    if (this.fallbackReason || this.delivery === 'stream') return;
    this.fallbackReason = reason;
    this.preReady = [];
    if (this._state === 'connecting' || this._state === 'streaming') this._state = 'buffering';
    this.logger.debug?.(`session ${this.sessionId}: batch fallback (${reason})`);
    this.hub.emit({ t: 'fallback', reason });
  }

  protected async doStop(): Promise<FinalEvent> {
    if (this._state === 'aborted') throw new StreamError('aborted', 'session was aborted');
    if (this._state === 'idle') throw new StreamError('invalid_state', 'stop() before start()');
    this._state = 'stopping';
    if (this.delivery !== 'batch' && !this.fallbackReason) {
      const viaSocket = await this.stopOverSocket();
      if (viaSocket) return viaSocket;
      if (this.delivery === 'stream') {
        // The server's own reason (e.g. duration_exceeded) when it gave one before closing.
        const why = this.lastFatal;
        throw why
          ? new StreamError(why.code, why.message)
          : new StreamError('disconnected', 'socket closed before final');
      }
    }
    return this.deliverBuffer();
  }

  /** Sends `stop` and waits for `final`; `undefined` when the socket died or timed out first. */
  private async stopOverSocket(): Promise<FinalEvent | undefined> {
    if (!this.socketAlive || !this.socket) return undefined;
    this.finalWait = waitForFinal(this.opts.finalTimeoutMs ?? 30_000);
    this.socket.send(JSON.stringify({ t: 'stop' }));
    const final = await this.finalWait.result;
    this.finalWait = undefined;
    if (!final && this.delivery === 'auto') this.switchToFallback('no final after stop');
    return final;
  }

  /** Uploads the local buffer through the session fallback and waits for the job's result. */
  private async deliverBuffer(): Promise<FinalEvent> {
    if (!this.buffer || this.buffer.frameCount === 0) {
      throw new StreamError('no_frames', 'nothing to deliver: no frames were captured');
    }
    this._state = 'uploading';
    return deliverFrames(this.fallback, this.buffer, this.lastTMicros, {
      timeoutMs: this.opts.resultTimeoutMs ?? 300_000,
      intervalMs: this.opts.resultPollMs,
    });
  }

  protected closeSocket(code: number, reason: string): void {
    closeQuietly(this.socket, code, reason);
  }
}
