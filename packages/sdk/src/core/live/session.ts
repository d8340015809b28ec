/**
 * `StreamSession`: the browser-side client of a cloud session, holding only the session token.
 * Its state and internals are in `StreamSessionBase` (session-base.ts); this class is the public API.
 *
 *
 * Delivery modes (spec: "Client delivery modes"):
 * - `stream`: WebSocket only; a dropped socket loses the measurement.
 * - `batch`: no socket; packets are buffered and uploaded as a frames file at `stop()`.
 * - `auto` (default): streams AND buffers; if the socket never opens or dies before `final`, the
 *   buffer is uploaded through the session fallback endpoint (the batch job supersedes the
 *   session) and `stop()` resolves with that job's measurement.
 */
import { decodePacket, isPacketError, type Telemetry } from '@vitals/protocol';
import { StreamError } from '../errors.js';
import { packets } from '../frames/frames-file.js';
import type { FinalEvent, ReadyEvent, StreamEvent, StreamEventMap } from './events.js';
import type { SessionState } from './options.js';
import { StreamSessionBase } from './session-base.js';

export type { Delivery, SessionState, StreamSessionOptions } from './options.js';

export class StreamSession extends StreamSessionBase {
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
}
