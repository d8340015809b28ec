/**
 * `StreamSession`: the browser-side client of a cloud session, holding only the session token.
 *
 * Delivery modes (spec: "Client delivery modes"):
 * - `stream`: WebSocket only; a dropped socket loses the measurement.
 * - `batch`: no socket; packets are buffered and uploaded as a frames file at `stop()`.
 * - `auto` (default): streams AND buffers; if the socket never opens or dies before `final`, the
 *   buffer is uploaded through the session fallback endpoint (the batch job supersedes the
 *   session) and `stop()` resolves with that job's measurement.
 */
import { CLIENT_DEFAULT_MAX_DURATION_SEC, decodePacket, isPacketError, type Telemetry } from '@vitals/protocol';
import { consoleLogger, type Logger } from '../clock.js';
import { StreamError } from '../errors.js';
import { FramesWriter, packets } from '../frames/frames-file.js';
import { HttpClient, defaultSleep, resolveHttpConfig } from '../http/transport.js';
import { EventHub, type FinalEvent, type ReadyEvent, type StreamEvent, type StreamEventMap } from './events.js';
import { SessionFallback, deliverFrames } from './fallback.js';
import { closeQuietly, globalWebSocketFactory, httpBaseFromWsUrl, readTokenClaims, type WebSocketLike } from './socket.js';
import { connectSocket } from './connect.js';
import { waitForFinal, type FinalWait } from './final-wait.js';
import type { Delivery, SessionState, StreamSessionOptions } from './options.js';

export type { Delivery, SessionState, StreamSessionOptions } from './options.js';

/** Packets over the socket wait in memory until `ready`; beyond this many they are dropped. */
const MAX_PRE_READY_PACKETS = 300;

export class StreamSession {
  readonly delivery: Delivery;
  readonly sessionId: string;
  readonly maxDurationSec: number;
  private readonly hub = new EventHub();
  private readonly buffer: FramesWriter | undefined;
  private readonly fallback: SessionFallback;
  private readonly now: () => number;
  private readonly logger: Logger;
  private socket: WebSocketLike | undefined;
  private socketAlive = false;
  private ready: ReadyEvent | undefined;
  private preReady: Uint8Array[] = [];
  private t0: number | undefined;
  private seq = 0;
  private lastTMicros = 0;
  private stopPromise: Promise<FinalEvent> | undefined;
  private fallbackReason: string | undefined;
  private finalEvent: FinalEvent | undefined;
  private finalReceived = false;
  private pendingPings: ((rttMs: number) => void)[] = [];
  private _state: SessionState = 'idle';
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

  get state(): SessionState {
    return this._state;
  }
  /** Features the server accepted (after `ready`). */
  get acceptedFeatures(): string[] | undefined {
    return this.ready?.acceptedFeatures;
  }
  /** The `final` result once `stop()` resolved. */
  get final(): FinalEvent | undefined {
    return this.finalEvent;
  }
  /** Why the session is (or will be) delivered through the batch fallback, if it is. */
  get fallbackActive(): string | undefined {
    return this.fallbackReason;
  }

  on<K extends keyof StreamEventMap>(type: K, fn: (e: StreamEventMap[K]) => void): () => void {
    return this.hub.on(type, fn);
  }
  off<K extends keyof StreamEventMap>(type: K, fn: (e: StreamEventMap[K]) => void): void {
    this.hub.off(type, fn);
  }
  /** Every event until the session ends: `for await (const e of session.events()) ...` */
  events(): AsyncIterableIterator<StreamEvent> {
    return this.hub.iterate();
  }
  [Symbol.asyncIterator](): AsyncIterableIterator<StreamEvent> {
    return this.hub.iterate();
  }

  /**
   * Connects and waits for `ready` (stream, auto). In `stream` mode a failure rejects; in `auto` it
   * switches to the fallback and resolves `undefined`; `batch` opens no socket.
   */
  async start(): Promise<ReadyEvent | undefined> {
    if (this._state !== 'idle') throw new StreamError('invalid_state', `start() in state ${this._state}`);
    if (this.delivery === 'batch') {
      this._state = 'buffering';
      return undefined;
    }
    this._state = 'connecting';
    try {
      this.ready = await this.connect();
      this._state = 'streaming';
      this.flushPreReady();
      return this.ready;
    } catch (err) {
      const e = err instanceof StreamError ? err : new StreamError('connect_failed', String(err));
      if (this.delivery === 'stream') {
        this._state = 'failed';
        this.hub.end();
        throw e;
      }
      this.switchToFallback(`socket did not open: ${e.code}`);
      return undefined;
    }
  }

  /** Sends one 36x36 RGB crop (type 1). `tMicros` defaults to time since the first frame. */
  sendFrame(p: { pixels: Uint8Array; tMicros?: number; seq?: number }): boolean {
    const t = this.timeOf(p.tMicros);
    if (t === undefined) return false;
    return this.emitPacket(packets.faceCrop({ pixels: p.pixels, tMicros: t, seq: p.seq ?? this.seq++ }), true);
  }

  sendQuality(p: { faceWidthRatio: number; meanBrightness: number; motionScore: number; tMicros?: number }): boolean {
    const t = this.timeOf(p.tMicros);
    return t !== undefined && this.emitPacket(packets.quality({ ...p, tMicros: t }), false);
  }

  /** Type 3, quantized as the spec says. */
  sendTelemetry(p: Telemetry & { tMicros?: number }): boolean {
    const t = this.timeOf(p.tMicros);
    return t !== undefined && this.emitPacket(packets.telemetry({ ...p, tMicros: t }), false);
  }

  /** One 448x448 JPEG, split into type-4 chunks. */
  sendAux(p: { jpeg: Uint8Array; tMicros?: number }): boolean {
    const t = this.timeOf(p.tMicros);
    if (t === undefined) return false;
    for (const chunk of packets.aux({ jpeg: p.jpeg, tMicros: t })) this.emitPacket(chunk, false);
    return true;
  }

  /** Sends an already-encoded packet (any of the four types), validated first. */
  sendPacket(bytes: Uint8Array): boolean {
    const decoded = decodePacket(bytes);
    if (isPacketError(decoded)) throw new StreamError('invalid_packet', decoded.error);
    if (this.timeOf(decoded.tMicros) === undefined) return false;
    if (decoded.type === 1) this.seq = Math.max(this.seq, decoded.seq + 1);
    return this.emitPacket(bytes, decoded.type === 1);
  }

  /** Round trip of a `ping`, in ms (needs an open socket). */
  ping(): Promise<number> {
    if (!this.socketAlive || !this.socket) return Promise.reject(new StreamError('not_connected', 'no open socket'));
    const sentAt = this.now();
    this.socket.send(JSON.stringify({ t: 'ping' }));
    return new Promise((resolve) => this.pendingPings.push(() => resolve(this.now() - sentAt)));
  }

  /** Finishes the capture and resolves with the `final` result (over the socket or the fallback). */
  stop(): Promise<FinalEvent> {
    this.stopPromise ??= this.doStop().then(
      (final) => {
        this.finalEvent = final;
        this._state = 'done';
        this.hub.emit(final);
        this.hub.end();
        this.closeSocket(1000, 'done');
        return final;
      },
      (err: unknown) => {
        if (this._state !== 'aborted') this._state = 'failed';
        this.hub.end();
        this.closeSocket(1000, 'failed');
        throw err;
      },
    );
    return this.stopPromise;
  }

  /** Discards the capture: the server stores nothing and sends no `final`. */
  abort(reason = 'aborted by client'): void {
    if (this._state === 'done' || this._state === 'aborted') return;
    this._state = 'aborted';
    if (this.socketAlive && this.socket) this.socket.send(JSON.stringify({ t: 'abort', reason }));
    this.closeSocket(1000, 'aborted');
    this.hub.end();
  }

  // ---- internals ----

  private timeOf(tMicros: number | undefined): number | undefined {
    if (this._state === 'done' || this._state === 'aborted' || this._state === 'failed' || this.stopPromise) return undefined;
    const now = this.now();
    this.t0 ??= now;
    const t = Math.max(0, Math.round(tMicros ?? (now - this.t0) * 1000));
    // The token caps the duration; frames past it would only earn `duration_exceeded`.
    if (t > this.maxDurationSec * 1e6) return undefined;
    if (t > this.lastTMicros) this.lastTMicros = t;
    return t;
  }

  private emitPacket(bytes: Uint8Array, isFrame: boolean): boolean {
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

  private flushPreReady(): void {
    const queued = this.preReady;
    this.preReady = [];
    for (const p of queued) this.sendOnSocket(p);
  }

  private connect(): Promise<ReadyEvent> {
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

  private switchToFallback(reason: string): void {
    if (this.fallbackReason || this.delivery === 'stream') return;
    this.fallbackReason = reason;
    this.preReady = [];
    if (this._state === 'connecting' || this._state === 'streaming') this._state = 'buffering';
    this.logger.debug?.(`session ${this.sessionId}: batch fallback (${reason})`);
    this.hub.emit({ t: 'fallback', reason });
  }

  private async doStop(): Promise<FinalEvent> {
    if (this._state === 'aborted') throw new StreamError('aborted', 'session was aborted');
    if (this._state === 'idle') throw new StreamError('invalid_state', 'stop() before start()');
    this._state = 'stopping';
    if (this.delivery !== 'batch' && !this.fallbackReason) {
      const viaSocket = await this.stopOverSocket();
      if (viaSocket) return viaSocket;
      if (this.delivery === 'stream') {
        // The server's own reason (e.g. duration_exceeded) when it gave one before closing.
        const why = this.lastFatal;
        throw why ? new StreamError(why.code, why.message) : new StreamError('disconnected', 'socket closed before final');
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

  private closeSocket(code: number, reason: string): void {
    closeQuietly(this.socket, code, reason);
  }
}
