/**
 * One streaming session, and the only owner of its state (spec: Streaming protocol, Streaming
 * events, Streaming error codes; CLARIFICATIONS 26, 27). Phases: `hello` (only a hello may arrive)
 * → `authorizing` (token and the pending→running compare-and-set) → `running` (packets and control
 * messages) → `finishing` (stop or duration reached: final measurement) → `closed`.
 *
 * Every change of the phase happens in a method here, and so does every decision about an ending;
 * the frames (queue, estimator, counters) belong to the session's FramePipeline (frame-pipeline.ts),
 * which only the session calls. The inbound path (connection.ts) only reads the phase and asks.
 * The WebSocket belongs to SessionSocket; the session decides what may still be sent (nothing once `closed`, except the
 * fatal `error` owed before the close) and when the socket closes.
 *
 * Error events: `fatal: true` means the session ends without a measurement and the socket closes;
 * `fatal: false` (insufficient_signal, duration_exceeded) means a `final` follows.
 */
import {
  HR_EVENT_MIN_SQI,
  PROTOCOL_VERSION,
  type AuxChunkPacket,
  type FaceCropPacket,
  type Packet,
  type StreamErrorCode,
} from '@vitals/protocol';
import type { EngineEvent, EngineMeasurement } from '@vitals/engine';
import type { AppContext } from '../context.js';
import type { SessionClaims } from '../domain/session-token.js';
import { isPoor, measurementFields } from '../domain/measurement-fields.js';
import { AuxChannel } from './aux-analysis.js';
import type { Drainable, FrameScheduler } from './scheduler.js';
import { recordHrLag } from './metrics.js';
import { FramePipeline, type AdmitHost } from './frame-pipeline.js';
import { CLOSE, INLINE_DRAIN_MAX_LAG_MS, OVERFLOW_STATS_MIN_MS, STATS_INTERVAL_MS, WALL_GRACE_MS } from './limits.js';
import { authorize, checkHello, isRefusal, type Grant, type Refusal } from './handshake.js';
import { jobStats, settleEnded, storeFinal, type Ending } from './settlement.js';
import { withStoreRetries } from './finish.js';
import { SETTLED_ELSEWHERE } from './settled-elsewhere.js';
import type { SessionSocket } from './session-socket.js';

export type Phase = 'hello' | 'authorizing' | 'running' | 'finishing' | 'closed';

export interface SessionLog {
  error(obj: unknown, msg: string): void;
  warn(obj: unknown, msg: string): void;
}

export interface SessionDeps {
  ctx: AppContext;
  scheduler: FrameScheduler;
  log: SessionLog;
  /** The socket is gone and nothing more will happen on it (the hub forgets the connection). */
  onEnd(): void;
}

export class StreamSession implements Drainable, AdmitHost {
  scheduled = false;
  private state: Phase = 'hello';
  private readonly openedAt: number;
  private claims?: SessionClaims;
  private accepted: string[] = [];
  /** From `ready` on: the frames' queue, estimator and counters. */
  private frames?: FramePipeline;
  private aux?: AuxChannel;
  private startedAt = 0;
  private lastPacketAt = 0;
  private lastStatsAt = 0;
  private lastOverflowStatsAt = 0;
  /** Set when the socket-level layer (ws) refused a message; the close then fails the session. */
  private socketError?: Ending;

  constructor(
    private readonly socket: SessionSocket,
    private readonly deps: SessionDeps,
  ) {
    this.openedAt = deps.ctx.clock.now();
  }

  get phase(): Phase {
    return this.state;
  }

  get sessionId(): string | undefined {
    return this.claims?.sid;
  }

  /** Nothing is sent once the session is closed (the fatal `error` goes through `fatal`). */
  send(obj: object): void {
    if (this.state !== 'closed') this.socket.send(obj);
  }

  private sendLive(obj: object): void {
    if (this.state !== 'closed') this.socket.sendLive(obj);
  }

  // ---- hello ----------------------------------------------------------------------------------

  async hello(msg: any): Promise<void> {
    const { ctx } = this.deps;
    this.state = 'authorizing';
    const claims = checkHello(ctx, msg);
    if (isRefusal(claims)) return this.refuse(claims);
    try {
      const grant = await authorize(ctx, claims, msg.features, () => this.state === 'authorizing');
      if (!grant) return; // failed or closed while loading
      if (isRefusal(grant)) return this.refuse(grant);
      this.claims = grant.claims;
      this.accepted = grant.accepted;
      if (this.state !== 'authorizing') {
        await this.settle({ status: 'aborted', code: 'disconnected', message: 'socket closed before ready' });
        return;
      }
      this.run(grant);
    } catch (err) {
      this.internal(err);
    }
  }

  /** The session is ours: start the clocks, the guards and the estimator, then `ready`. */
  private run({ claims, accepted, analyzer, startedAt }: Grant): void {
    this.state = 'running';
    this.startedAt = startedAt;
    this.lastPacketAt = startedAt;
    this.lastStatsAt = startedAt;
    this.frames = new FramePipeline(claims.dur * 1e6, performance.now(), (e, arrivedAt) => this.emit(e, arrivedAt));
    if (analyzer)
      this.aux = new AuxChannel(analyzer, accepted, {
        live: () => this.state === 'running' || this.state === 'finishing',
        sendLive: (e) => this.sendLive(e),
      });
    this.send({
      t: 'ready',
      sessionId: claims.sid,
      acceptedFeatures: accepted,
      maxDurationSec: claims.dur,
      protocol: PROTOCOL_VERSION,
    });
  }

  // ---- packets (phase `running`) ------------------------------------------------------------

  /** The flood guard over every binary message; false when it tripped (the session has ended). */
  admitMessage(wall: number): boolean {
    const why = this.frames!.admitMessage(wall);
    if (why) this.fatal('frame_rate_exceeded', why, CLOSE.policy);
    return !why;
  }

  /** A decoded binary message other than a face crop (those go to faceCrop). */
  packet(p: Exclude<Packet, FaceCropPacket>): void {
    const now = this.deps.ctx.clock.now();
    this.lastPacketAt = now;
    switch (p.type) {
      case 2:
      case 3:
        this.frames!.signal(p); // cheap: the latest quality, or one telemetry sample
        return;
      case 4:
        return this.auxChunk(p, now);
    }
  }

  private auxChunk(p: AuxChunkPacket, now: number): void {
    if (!this.aux) return; // neither emotion nor gaze accepted: validated, then ignored
    const error = this.aux.add(p, now);
    if (error) this.fatal('protocol_error', error, CLOSE.protocol);
  }

  /**
   * A well-formed type-1 message (isFaceCropPacket), read where it lies: the frame pipeline copies
   * what it queues, so the `ws` message is not kept. `wall` is its performance.now() arrival time.
   */
  faceCrop(bytes: Uint8Array, wall: number): void {
    const now = this.deps.ctx.clock.now();
    this.lastPacketAt = now;
    const pastWallDuration = now - this.startedAt > this.claims!.dur * 1000 + WALL_GRACE_MS;
    const a = this.frames!.admit(bytes, wall, pastWallDuration, this);
    switch (a.kind) {
      case 'rate':
        return this.fatal('frame_rate_exceeded', a.reason, CLOSE.policy);
      case 'duration':
        void this.finish('duration');
        return;
      case 'queued':
        this.deps.scheduler.schedule(this);
    }
  }

  /** AdmitHost: a full queue drains one frame inline while the process keeps up (scheduler lag). */
  mayDrainInline(): boolean {
    return this.deps.scheduler.lagMs() < INLINE_DRAIN_MAX_LAG_MS;
  }

  /** AdmitHost: the oldest queued frame was dropped; `stats` at most every 250 ms. */
  overflowed(): void {
    const now = this.lastPacketAt; // the arriving frame's clock reading (faceCrop())
    if (now - this.lastOverflowStatsAt < OVERFLOW_STATS_MIN_MS) return;
    this.lastOverflowStatsAt = now;
    this.sendStats(now);
  }

  /** Called by the scheduler: processes up to `max` queued frames; returns whether work remains. */
  drain(max: number): boolean {
    return this.frames?.drain(max) ?? false;
  }

  private emit(e: EngineEvent, arrivedAt: number): void {
    switch (e.t) {
      case 'hr':
        // Published only while the signal-quality index is above 0.38 (spec: Streaming events).
        if (e.sqi > HR_EVENT_MIN_SQI) {
          this.sendLive(e);
          recordHrLag(performance.now() - arrivedAt);
        }
        return;
      case 'hrv':
      case 'bp':
      case 'spo2':
        if (this.accepted.includes(e.t)) this.sendLive(e);
        return;
    }
  }

  private sendStats(now: number): void {
    this.lastStatsAt = now;
    const { received, dropped, processed } = this.frames!.counts();
    this.send({ t: 'stats', received, dropped, backlogMs: this.frames!.backlogMs(), processed });
  }

  // ---- timers (driven by the hub's ticker; spec: Limits) --------------------------------------

  /** No `hello` or no packets for the idle timeout, the token's duration on the wall clock, aux sets, `stats`. */
  tick(now: number): void {
    const idleSec = this.deps.ctx.config.idleTimeoutSec;
    const idleMs = idleSec * 1000;
    if (this.state === 'hello' && now - this.openedAt > idleMs)
      return this.fatal('idle_timeout', `no hello within ${idleSec} s`, CLOSE.policy);
    if (this.state !== 'running') return;
    if (now - this.lastPacketAt > idleMs)
      return this.fatal('idle_timeout', `no packets for ${idleSec} s`, CLOSE.policy);
    if (now - this.startedAt > this.claims!.dur * 1000 + WALL_GRACE_MS) {
      void this.finish('duration');
      return;
    }
    this.aux?.sweep(now);
    if (now - this.lastStatsAt >= STATS_INTERVAL_MS) this.sendStats(now);
  }

  // ---- the final measurement --------------------------------------------------------------------

  /**
   * `stop`, or the token's duration reached: every queued frame is processed, the final measurement
   * is stored (finish.ts: through a store blip), `final` carries it as stored, the socket closes.
   */
  async finish(reason: 'stop' | 'duration'): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'finishing';
    const { ctx, log } = this.deps;
    const sid = this.claims!.sid;
    try {
      if (reason === 'duration')
        this.send({
          t: 'error',
          code: 'duration_exceeded',
          message: `session reached its ${this.claims!.dur} s; frames past it are ignored`,
          fatal: false,
        });
      // A long capture's final analysis runs on the estimator thread (batch/media-threads.ts).
      const threads = ctx.batch?.threads;
      const m = threads ? await this.frames!.finishWith((i) => threads.analyzeTrace(i)) : this.frames!.finish();
      const fields = measurementFields(m, this.aux?.aggregate);
      if (!m || isPoor(m))
        this.send({
          t: 'error',
          code: 'insufficient_signal',
          message: 'not enough signal for a measurement',
          fatal: false,
        });
      const stats = this.jobStats(m);
      const doc = await withStoreRetries(() => storeFinal(ctx, sid, m, fields, stats), {
        stillFinishing: () => this.state === 'finishing',
        onRetry: (err, retryInMs) =>
          log.warn({ err, sessionId: sid, retryInMs }, 'storing the final measurement: store unavailable, retrying'),
      });
      if (!doc) return this.fatal('session_already_used', SETTLED_ELSEWHERE, CLOSE.policy, false);
      this.send({ t: 'final', measurementId: doc.id, measurement: doc });
      this.end(undefined, CLOSE.normal);
    } catch (err) {
      this.internal(err);
    }
  }

  // ---- endings (spec: Streaming error codes) ---------------------------------------------------

  /** A fatal error: `error` event, the session settles (failed or aborted), the socket closes. */
  fatal(code: StreamErrorCode, message: string, closeCode: number, settle = true): void {
    if (this.state === 'closed') return;
    this.socket.send({ t: 'error', code, message, fatal: true });
    const status = code === 'idle_timeout' ? 'aborted' : 'failed';
    this.end(settle ? { status, code, message } : undefined, closeCode);
  }

  /** The client's `abort`. */
  abort(reason: string): void {
    const message = reason ? `aborted by client: ${reason}` : 'aborted by client';
    this.end({ status: 'aborted', code: 'aborted_by_client', message }, CLOSE.normal);
  }

  /**
   * The job was settled by someone else (a session-fallback upload superseded it: settled-elsewhere.ts):
   * the socket is told at once; the job keeps the status the other party gave it.
   */
  settledElsewhere(): void {
    if (this.state !== 'running') return; // its own settlement (finishing), or already ending
    this.fatal('session_already_used', SETTLED_ELSEWHERE, CLOSE.policy, false);
  }

  /** ws refused a frame (over its hard cap, bad UTF-8, bad opcode) and is closing the socket. */
  socketFailed(message: string): void {
    this.socketError = { status: 'failed', code: 'protocol_error', message: `socket error: ${message}` };
  }

  /** The socket closed. `finishing` continues: the client asked to stop, the measurement is stored either way. */
  socketClosed(): void {
    if (this.state !== 'finishing') {
      const wasRunning = this.state === 'running';
      this.close();
      if (wasRunning)
        void this.settle(
          this.socketError ?? { status: 'aborted', code: 'disconnected', message: 'socket closed without stop' },
        );
    }
    this.deps.onEnd();
  }

  /** Server shutdown: the session ends without a result (no resume in v1). */
  async shutdown(): Promise<void> {
    if (this.state === 'closed') return;
    const wasLive = this.close();
    this.socket.send({ t: 'error', code: 'internal_error', message: 'server shutting down', fatal: true });
    this.socket.goAway();
    if (wasLive) await this.settle({ status: 'aborted', code: 'disconnected', message: 'server shut down' });
    this.deps.onEnd();
  }

  private refuse(r: Refusal): void {
    this.fatal(r.code, r.message, r.closeCode);
  }

  private internal(err: unknown): void {
    this.deps.log.error({ err, sessionId: this.claims?.sid }, 'streaming session failed');
    this.fatal('internal_error', 'internal error', CLOSE.internal);
  }

  private end(ending: Ending | undefined, closeCode: number): void {
    const wasLive = this.close();
    this.socket.close(closeCode);
    if (ending && wasLive) void this.settle(ending);
  }

  /** The one way into `closed`: no more frames or events. Returns whether the session had gone live (it then settles). */
  private close(): boolean {
    const wasLive = this.state === 'running' || this.state === 'finishing';
    this.state = 'closed';
    this.frames?.stop();
    return wasLive;
  }

  private async settle(e: Ending): Promise<void> {
    if (!this.claims) return;
    try {
      const span = this.frames?.span() ?? { processed: 0, firstT: -1, lastProcessedT: -1 };
      await settleEnded(this.deps.ctx, this.claims.sid, e, span, this.jobStats());
    } catch (err) {
      this.deps.log.error({ err, sessionId: this.claims.sid }, 'settling a streaming session failed');
    }
  }

  /** The job's `stats`: the stream's counters, and the engine's when a measurement was made. */
  private jobStats(m?: EngineMeasurement): Record<string, unknown> {
    const counts = this.frames?.counts() ?? { received: 0, dropped: 0, processed: 0 };
    return jobStats({ ...counts, auxDropped: this.aux?.dropped ?? 0 }, m);
  }
}
