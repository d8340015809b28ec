/**
 * One streaming socket (spec: Streaming protocol, Streaming events, Streaming error codes;
 * CLARIFICATIONS 26, 27). Phases: `hello` (only a hello may arrive) → `authorizing` (token and the
 * pending→running compare-and-set; any message now is a protocol error) → `running` (packets and
 * control messages) → `finishing` (stop or duration reached: final measurement) → `closed`.
 *
 * Error events: `fatal: true` means the session ends without a measurement and the socket closes;
 * `fatal: false` (insufficient_signal, duration_exceeded) means a `final` follows.
 *
 * This file holds the session's state and its inbound path (the per-frame hot path stays here);
 * the rest works on the same state: handshake.ts (the `hello` checks), finish.ts (`final`),
 * endings.ts (fatal errors, socket close, shutdown), timers.ts, outbound.ts, aux-analysis.ts.
 * The class is internal to this folder (index.ts exports the hub only).
 */
import { parseUntrustedJson } from '../json.js';
import type { WebSocket } from 'ws';
import {
  HR_EVENT_MIN_SQI,
  PROTOCOL_VERSION,
  STREAM_QUEUE_FRAMES,
  WS_MAX_MESSAGE_BYTES,
  decodePacket,
  isPacketError,
  type FaceCropPacket,
} from '@vitals/protocol';
import { StreamingEstimator, type EngineEvent } from '@vitals/engine';
import type { AuxAnalyzer } from '@vitals/media';
import type { AppContext } from '../context.js';
import type { SessionClaims } from '../domain/session-token.js';
import { FrameRateGuard, TokenBucket } from './rate-guard.js';
import { AuxAssembler } from './aux-assembler.js';
import { newAuxAggregate } from './final-measurement.js';
import type { Drainable, FrameScheduler } from './scheduler.js';
import { recordFramesProcessed, recordHrLag } from './metrics.js';
import { FrameQueue } from './frame-queue.js';
import {
  CLOSE,
  INLINE_DRAIN_MAX_LAG_MS,
  MAX_MESSAGES_PER_SEC,
  OVERFLOW_STATS_MIN_MS,
  WALL_GRACE_MS,
} from './limits.js';
import { authorize, checkHello, isRefusal, type Grant } from './handshake.js';
import type { Ending } from './settlement.js';
import { faceCropOf, isFaceCrop } from './face-crop.js';
import { end, fatal, internal, onSocketClose, refuse, settle, shutdown } from './endings.js';
import { finish } from './finish.js';
import { tick } from './timers.js';
import type { HubLogger } from './hub.js';
import { send, sendLive, sendStats } from './outbound.js';
import { analyzeAux } from './aux-analysis.js';

export { CLOSE, STATS_INTERVAL_MS, WALL_GRACE_MS } from './limits.js';

export type Phase = 'hello' | 'authorizing' | 'running' | 'finishing' | 'closed';

export interface ConnectionDeps {
  ctx: AppContext;
  scheduler: FrameScheduler;
  log: HubLogger;
  onEnd(): void;
}

export class StreamConnection implements Drainable {
  scheduled = false;
  phase: Phase = 'hello';
  readonly openedAt: number;
  claims?: SessionClaims;
  accepted: string[] = [];
  estimator?: StreamingEstimator;
  /** Unprocessed frames with their performance.now() arrival times. */
  readonly queue = new FrameQueue<FaceCropPacket>(STREAM_QUEUE_FRAMES);
  private frameGuard?: FrameRateGuard;
  private messageGuard?: TokenBucket;
  aux?: AuxAssembler;
  analyzer?: AuxAnalyzer;
  auxBusy = false;
  readonly auxAgg = newAuxAggregate();
  startedAt = 0;
  lastPacketAt = 0;
  lastStatsAt = 0;
  private lastOverflowStatsAt = 0;
  received = 0;
  dropped = 0;
  processed = 0;
  firstT = -1;
  private lastT = -1;
  lastProcessedT = -1;
  /** Set when the socket-level layer (ws) refused a message; the close then fails the session. */
  socketError?: Ending;

  constructor(
    readonly ws: WebSocket,
    readonly deps: ConnectionDeps,
  ) {
    this.openedAt = deps.ctx.clock.now();
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    // A message over ws's hard cap is refused from its frame header, and ws then closes (1009)
    // before its own 'error' event, too late to send anything. Its receiver reports first: the
    // spec's fatal error event goes out there, ahead of the close frame (issue 19, defect 3).
    const receiver = (ws as unknown as { _receiver?: import('node:events').EventEmitter })._receiver;
    receiver?.prependListener('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
        fatal(this, 'protocol_error', `message exceeds ${WS_MAX_MESSAGE_BYTES} bytes`, CLOSE.tooBig);
    });
    ws.on('error', (err) => {
      // ws refused a frame (over its hard cap, bad UTF-8, bad opcode) and is closing the socket.
      this.socketError = { status: 'failed', code: 'protocol_error', message: `socket error: ${err.message}` };
    });
    ws.on('close', () => onSocketClose(this));
  }

  get sessionId(): string | undefined {
    return this.claims?.sid;
  }

  /** The hub ticks every connection (timers.ts). */
  tick(now: number): void {
    tick(this, now);
  }

  /** Server shutdown: the session ends without a result (no resume in v1). */
  shutdown(): Promise<void> {
    return shutdown(this);
  }

  // ---- inbound ------------------------------------------------------------------------------

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.phase === 'closed') return;
    if (data.length > WS_MAX_MESSAGE_BYTES) {
      fatal(this, 'protocol_error', `message of ${data.length} bytes exceeds ${WS_MAX_MESSAGE_BYTES}`, CLOSE.tooBig);
      return;
    }
    if (this.phase === 'finishing') return; // frames in flight after stop are ignored
    if (isBinary) this.onBinary(data);
    else this.onText(data);
  }

  private onText(data: Buffer): void {
    let msg: any;
    try {
      msg = parseUntrustedJson(data.toString('utf8'));
    } catch {
      fatal(this, 'protocol_error', 'control message is not valid JSON', CLOSE.protocol);
      return;
    }
    const t = msg && typeof msg === 'object' ? msg.t : undefined;
    if (this.phase !== 'running') {
      // CLARIFICATIONS 27: before `ready`, only one `hello` is allowed.
      if (this.phase === 'hello' && t === 'hello') void this.hello(msg);
      else
        fatal(
          this,
          'protocol_error',
          this.phase === 'hello' ? 'the first message must be hello' : 'wait for ready',
          CLOSE.protocol,
        );
      return;
    }
    switch (t) {
      case 'ping':
        send(this, { t: 'pong' });
        return;
      case 'stop':
        void finish(this, 'stop');
        return;
      case 'abort': {
        const reason = typeof msg.reason === 'string' ? msg.reason.slice(0, 200) : '';
        end(
          this,
          {
            status: 'aborted',
            code: 'aborted_by_client',
            message: reason ? `aborted by client: ${reason}` : 'aborted by client',
          },
          CLOSE.normal,
        );
        return;
      }
      default:
        fatal(
          this,
          'protocol_error',
          t === 'hello' ? 'hello sent twice' : `unknown control message ${JSON.stringify(String(t)).slice(0, 40)}`,
          CLOSE.protocol,
        );
    }
  }

  private onBinary(data: Buffer): void {
    if (this.phase !== 'running') {
      fatal(this, 'protocol_error', 'binary packet before ready', CLOSE.protocol);
      return;
    }
    const now = this.deps.ctx.clock.now();
    const wall = performance.now();
    if (!this.messageGuard!.has(wall)) {
      fatal(this, 'frame_rate_exceeded', `more than ${MAX_MESSAGES_PER_SEC} binary messages per second`, CLOSE.policy);
      return;
    }
    this.messageGuard!.take();
    const p = isFaceCrop(data) ? faceCropOf(data) : decodePacket(data);
    if (isPacketError(p)) {
      fatal(this, 'protocol_error', p.error, CLOSE.protocol);
      return;
    }
    this.lastPacketAt = now;
    switch (p.type) {
      case 1:
        this.onFrame(p, now, wall);
        return;
      case 2:
      case 3:
        this.estimator!.push(p); // cheap: the latest quality, or one telemetry sample
        return;
      case 4: {
        if (!this.aux) return; // neither emotion nor gaze accepted: validated, then ignored
        const r = this.aux.add(p, now);
        if (r && 'error' in r) fatal(this, 'protocol_error', r.error, CLOSE.protocol);
        else if (r) analyzeAux(this, r.jpeg, r.tMicros);
        return;
      }
    }
  }

  private onFrame(p: FaceCropPacket, now: number, wall: number): void {
    this.received++;
    if (p.tMicros <= this.lastT) {
      this.dropped++; // timestamps must increase; the estimator would reject it anyway
      return;
    }
    const why = this.frameGuard!.admit(p.tMicros, wall);
    if (why) {
      fatal(this, 'frame_rate_exceeded', why, CLOSE.policy);
      return;
    }
    if (this.firstT < 0) this.firstT = p.tMicros;
    const durMicros = this.claims!.dur * 1e6;
    if (p.tMicros - this.firstT >= durMicros || now - this.startedAt > this.claims!.dur * 1000 + WALL_GRACE_MS) {
      void finish(this, 'duration');
      return;
    }
    this.lastT = p.tMicros;
    // A burst that arrived in one read (a client catching up) is not a server falling behind:
    // while the process keeps up, make room by processing instead of dropping.
    if (this.queue.length >= STREAM_QUEUE_FRAMES && this.deps.scheduler.lagMs() < INLINE_DRAIN_MAX_LAG_MS)
      this.drain(1);
    if (this.queue.length >= STREAM_QUEUE_FRAMES) {
      // Spec: Limits, unprocessed-frame queue: drop the oldest, report with `stats`.
      this.queue.shift();
      this.dropped++;
      if (now - this.lastOverflowStatsAt >= OVERFLOW_STATS_MIN_MS) {
        this.lastOverflowStatsAt = now;
        sendStats(this, now);
      }
    }
    this.queue.push(p, wall);
    this.deps.scheduler.schedule(this);
  }

  // ---- hello ----------------------------------------------------------------------------------

  private async hello(msg: any): Promise<void> {
    const { ctx } = this.deps;
    this.phase = 'authorizing';
    const claims = checkHello(ctx, msg);
    if (isRefusal(claims)) return refuse(this, claims);
    try {
      const grant = await authorize(ctx, claims, msg.features, () => this.phase === 'authorizing');
      if (!grant) return; // failed or closed while loading
      if (isRefusal(grant)) return refuse(this, grant);
      this.claims = grant.claims;
      this.accepted = grant.accepted;
      if (this.phase !== 'authorizing') {
        await settle(this, { status: 'aborted', code: 'disconnected', message: 'socket closed before ready' });
        return;
      }
      this.run(grant);
    } catch (err) {
      internal(this, err);
    }
  }

  /** The session is ours: start the clocks, the guards and the estimator, then `ready`. */
  private run({ claims, accepted, analyzer, startedAt }: Grant): void {
    this.phase = 'running';
    this.startedAt = startedAt;
    this.lastPacketAt = startedAt;
    this.lastStatsAt = startedAt;
    this.estimator = new StreamingEstimator();
    this.frameGuard = new FrameRateGuard(performance.now());
    this.messageGuard = new TokenBucket(performance.now(), MAX_MESSAGES_PER_SEC);
    this.analyzer = analyzer;
    if (analyzer) this.aux = new AuxAssembler();
    send(this, {
      t: 'ready',
      sessionId: claims.sid,
      acceptedFeatures: accepted,
      maxDurationSec: claims.dur,
      protocol: PROTOCOL_VERSION,
    });
  }

  // ---- processing -----------------------------------------------------------------------------

  /** Called by the scheduler: runs queued frames through the estimator. */
  drain(max: number): boolean {
    let n = 0;
    while (n < max && this.queue.length > 0 && this.estimator) {
      const p = this.queue.shift()!;
      const arrivedAt = this.queue.shiftedArrival;
      const events = this.estimator.push(p);
      this.processed++;
      this.lastProcessedT = p.tMicros;
      for (let i = 0; i < events.length; i++) this.emit(events[i], arrivedAt);
      n++;
    }
    if (n > 0) recordFramesProcessed(n);
    return this.queue.length > 0 && this.estimator !== undefined;
  }

  private emit(e: EngineEvent, arrivedAt: number): void {
    switch (e.t) {
      case 'hr':
        // Published only while the signal-quality index is above 0.38 (spec: Streaming events).
        if (e.sqi > HR_EVENT_MIN_SQI) {
          sendLive(this, e);
          recordHrLag(performance.now() - arrivedAt);
        }
        return;
      case 'hrv':
      case 'bp':
      case 'spo2':
        if (this.accepted.includes(e.t)) sendLive(this, e);
        return;
    }
  }
}
