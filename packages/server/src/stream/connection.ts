/**
 * One streaming socket (spec: Streaming protocol, Streaming events, Streaming error codes;
 * CLARIFICATIONS 26, 27). Phases: `hello` (only a hello may arrive) → `authorizing` (token and the
 * pending→running compare-and-set; any message now is a protocol error) → `running` (packets and
 * control messages) → `finishing` (stop or duration reached: final measurement) → `closed`.
 *
 * Error events: `fatal: true` means the session ends without a measurement and the socket closes;
 * `fatal: false` (insufficient_signal, duration_exceeded) means a `final` follows.
 */
import { parseUntrustedJson } from '../json.js';
import type { WebSocket } from 'ws';
import {
  FACE_CROP_PACKET_BYTES,
  HR_EVENT_MIN_SQI,
  PROTOCOL_VERSION,
  STREAM_QUEUE_FRAMES,
  WS_MAX_MESSAGE_BYTES,
  decodePacket,
  isPacketError,
  type FaceCropPacket,
  type StreamErrorCode,
} from '@vitals/protocol';
import { StreamingEstimator, type EngineEvent, type EngineMeasurement } from '@vitals/engine';
import type { AuxAnalyzer } from '@vitals/media';
import type { AppContext } from '../context.js';
import { verifySessionToken, type SessionClaims } from '../domain/session-token.js';
import { settleJob, type MeasurementFields } from '../domain/jobs.js';
import { getJob, transitionJob } from '../store/jobs.js';
import { getMeasurement } from '../store/measurements.js';
import { FrameRateGuard, TokenBucket } from './rate-guard.js';
import { AuxAssembler } from './aux-assembler.js';
import { auxAnalyzer } from './aux-models.js';
import { isPoor, newAuxAggregate, toFields } from './final-measurement.js';
import type { Drainable, FrameScheduler } from './scheduler.js';
import { recordFramesProcessed, recordHrLag } from './metrics.js';
import { FrameQueue } from './frame-queue.js';

/** Close codes (docs/streaming.md). */
export const CLOSE = { normal: 1000, goingAway: 1001, protocol: 1002, policy: 1008, tooBig: 1009, internal: 1011 } as const;

/** Wall-clock slack past the token's duration before `duration_exceeded` (camera start, jitter). */
export const WALL_GRACE_MS = 5000;
/** Periodic `stats` events, wall clock. */
export const STATS_INTERVAL_MS = 2000;
/** At most one overflow-triggered `stats` per this many ms. */
const OVERFLOW_STATS_MIN_MS = 250;
/** Frames are processed inline instead of dropped while the scheduler lags less than this. */
const INLINE_DRAIN_MAX_LAG_MS = 100;
/** All binary messages together (frames, telemetry, quality, aux chunks): a flood guard. */
const MAX_MESSAGES_PER_SEC = 256;
/** Live events are skipped while the client is not reading (outbound buffer over this). */
const MAX_OUTBOUND_BYTES = 256 * 1024;

type Phase = 'hello' | 'authorizing' | 'running' | 'finishing' | 'closed';

export interface ConnectionDeps {
  ctx: AppContext;
  scheduler: FrameScheduler;
  log: { error(obj: unknown, msg: string): void };
  onEnd(): void;
}

type Ending = { status: 'aborted' | 'failed'; code: string; message: string };

export class StreamConnection implements Drainable {
  scheduled = false;
  private phase: Phase = 'hello';
  private readonly openedAt: number;
  private claims?: SessionClaims;
  private accepted: string[] = [];
  private estimator?: StreamingEstimator;
  /** Unprocessed frames with their performance.now() arrival times. */
  private readonly queue = new FrameQueue<FaceCropPacket>(STREAM_QUEUE_FRAMES);
  private frameGuard?: FrameRateGuard;
  private messageGuard?: TokenBucket;
  private aux?: AuxAssembler;
  private analyzer?: AuxAnalyzer;
  private auxBusy = false;
  private readonly auxAgg = newAuxAggregate();
  private startedAt = 0;
  private lastPacketAt = 0;
  private lastStatsAt = 0;
  private lastOverflowStatsAt = 0;
  private received = 0;
  private dropped = 0;
  private processed = 0;
  private firstT = -1;
  private lastT = -1;
  private lastProcessedT = -1;
  /** Set when the socket-level layer (ws) refused a message; the close then fails the session. */
  private socketError?: Ending;

  constructor(
    private readonly ws: WebSocket,
    private readonly deps: ConnectionDeps,
  ) {
    this.openedAt = deps.ctx.clock.now();
    ws.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    ws.on('error', (err) => {
      // ws refused a frame (over its hard cap, bad UTF-8, bad opcode) and is closing the socket.
      this.socketError = { status: 'failed', code: 'protocol_error', message: `socket error: ${err.message}` };
    });
    ws.on('close', () => this.onSocketClose());
  }

  get sessionId(): string | undefined {
    return this.claims?.sid;
  }

  // ---- inbound ------------------------------------------------------------------------------

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.phase === 'closed') return;
    if (data.length > WS_MAX_MESSAGE_BYTES) {
      this.fatal('protocol_error', `message of ${data.length} bytes exceeds ${WS_MAX_MESSAGE_BYTES}`, CLOSE.tooBig);
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
      this.fatal('protocol_error', 'control message is not valid JSON', CLOSE.protocol);
      return;
    }
    const t = msg && typeof msg === 'object' ? msg.t : undefined;
    if (this.phase !== 'running') {
      // CLARIFICATIONS 27: before `ready`, only one `hello` is allowed.
      if (this.phase === 'hello' && t === 'hello') void this.hello(msg);
      else this.fatal('protocol_error', this.phase === 'hello' ? 'the first message must be hello' : 'wait for ready', CLOSE.protocol);
      return;
    }
    switch (t) {
      case 'ping':
        this.send({ t: 'pong' });
        return;
      case 'stop':
        void this.finish('stop');
        return;
      case 'abort': {
        const reason = typeof msg.reason === 'string' ? msg.reason.slice(0, 200) : '';
        this.end({ status: 'aborted', code: 'aborted_by_client', message: reason ? `aborted by client: ${reason}` : 'aborted by client' }, CLOSE.normal);
        return;
      }
      default:
        this.fatal('protocol_error', t === 'hello' ? 'hello sent twice' : `unknown control message ${JSON.stringify(String(t)).slice(0, 40)}`, CLOSE.protocol);
    }
  }

  private onBinary(data: Buffer): void {
    if (this.phase !== 'running') {
      this.fatal('protocol_error', 'binary packet before ready', CLOSE.protocol);
      return;
    }
    const now = this.deps.ctx.clock.now();
    const wall = performance.now();
    if (!this.messageGuard!.has(wall)) {
      this.fatal('frame_rate_exceeded', `more than ${MAX_MESSAGES_PER_SEC} binary messages per second`, CLOSE.policy);
      return;
    }
    this.messageGuard!.take();
    const p = isFaceCrop(data) ? faceCropOf(data) : decodePacket(data);
    if (isPacketError(p)) {
      this.fatal('protocol_error', p.error, CLOSE.protocol);
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
        if (r && 'error' in r) this.fatal('protocol_error', r.error, CLOSE.protocol);
        else if (r) this.analyzeAux(r.jpeg, r.tMicros);
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
      this.fatal('frame_rate_exceeded', why, CLOSE.policy);
      return;
    }
    if (this.firstT < 0) this.firstT = p.tMicros;
    const durMicros = this.claims!.dur * 1e6;
    if (p.tMicros - this.firstT >= durMicros || now - this.startedAt > this.claims!.dur * 1000 + WALL_GRACE_MS) {
      void this.finish('duration');
      return;
    }
    this.lastT = p.tMicros;
    // A burst that arrived in one read (a client catching up) is not a server falling behind:
    // while the process keeps up, make room by processing instead of dropping.
    if (this.queue.length >= STREAM_QUEUE_FRAMES && this.deps.scheduler.lagMs() < INLINE_DRAIN_MAX_LAG_MS) this.drain(1);
    if (this.queue.length >= STREAM_QUEUE_FRAMES) {
      // Spec: Limits, unprocessed-frame queue: drop the oldest, report with `stats`.
      this.queue.shift();
      this.dropped++;
      if (now - this.lastOverflowStatsAt >= OVERFLOW_STATS_MIN_MS) {
        this.lastOverflowStatsAt = now;
        this.sendStats(now);
      }
    }
    this.queue.push(p, wall);
    this.deps.scheduler.schedule(this);
  }

  // ---- hello ----------------------------------------------------------------------------------

  private async hello(msg: any): Promise<void> {
    const { ctx } = this.deps;
    this.phase = 'authorizing';
    if (msg.protocol !== PROTOCOL_VERSION) {
      this.fatal('protocol_error', `hello.protocol must be ${PROTOCOL_VERSION}`, CLOSE.protocol);
      return;
    }
    const check = verifySessionToken(ctx.serverSecret, msg.token, ctx.clock.now());
    if (!check.ok) {
      const message = check.code === 'token_expired' ? 'session token expired; mint a new session' : 'session token did not verify';
      this.fatal(check.code, message, CLOSE.policy);
      return;
    }
    const claims = check.claims;
    try {
      const key = await ctx.keys.get(claims.kid);
      if (!key || key.status !== 'active' || (key.expiresAt !== null && key.expiresAt <= ctx.clock.now())) {
        this.fatal('token_invalid', 'the key that minted this session is not active', CLOSE.policy);
        return;
      }
      let accepted = claims.feat.slice();
      if (Array.isArray(msg.features)) accepted = accepted.filter((f) => msg.features.includes(f));
      if (accepted.includes('emotion') || accepted.includes('gaze')) {
        const a = await auxAnalyzer();
        accepted = accepted.filter((f) => (f === 'emotion' ? a.emotionAvailable : f === 'gaze' ? a.gazeAvailable : true));
        if (accepted.includes('emotion') || accepted.includes('gaze')) this.analyzer = a;
      }
      if (this.phase !== 'authorizing') return; // failed or closed while loading
      const now = ctx.clock.now();
      // One connection per token, across processes: only the call that moves pending→running wins.
      const moved = await transitionJob(ctx.db.db, claims.sid, ['pending'], {
        status: 'running',
        started_at: now,
        updated_at: now,
        accepted_features: JSON.stringify(accepted),
      });
      if (!moved) {
        this.fatal('session_already_used', 'this session was already connected (one connection per token)', CLOSE.policy);
        return;
      }
      this.claims = claims;
      this.accepted = accepted;
      if (this.phase !== 'authorizing') {
        await this.settle({ status: 'aborted', code: 'disconnected', message: 'socket closed before ready' });
        return;
      }
      this.phase = 'running';
      this.startedAt = now;
      this.lastPacketAt = now;
      this.lastStatsAt = now;
      this.estimator = new StreamingEstimator();
      this.frameGuard = new FrameRateGuard(performance.now());
      this.messageGuard = new TokenBucket(performance.now(), MAX_MESSAGES_PER_SEC);
      if (this.analyzer) this.aux = new AuxAssembler();
      this.send({ t: 'ready', sessionId: claims.sid, acceptedFeatures: accepted, maxDurationSec: claims.dur, protocol: PROTOCOL_VERSION });
    } catch (err) {
      this.internal(err);
    }
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

  private analyzeAux(jpeg: Uint8Array, tMicros: number): void {
    // At most one analysis in flight per session (the models run at up to 2 Hz anyway).
    if (this.auxBusy || !this.analyzer) return;
    this.auxBusy = true;
    this.analyzer
      .analyze(jpeg)
      .then((r) => {
        if (this.phase !== 'running' && this.phase !== 'finishing') return;
        const tMs = Math.round(tMicros / 1000);
        if (r.emotion && this.accepted.includes('emotion')) {
          this.auxAgg.emotionSamples++;
          r.emotion.forEach((v, i) => (this.auxAgg.emotionSum[i] += v));
          this.sendLive({ t: 'emotion', probs: r.emotion, tMs });
        }
        if (r.gaze && this.accepted.includes('gaze')) {
          this.auxAgg.gazeSamples++;
          this.auxAgg.yawSum += r.gaze.yaw;
          this.auxAgg.pitchSum += r.gaze.pitch;
          this.sendLive({ t: 'gaze', yaw: r.gaze.yaw, pitch: r.gaze.pitch, tMs });
        }
      })
      .catch(() => undefined) // a failed aux frame degrades emotion/gaze only
      .finally(() => (this.auxBusy = false));
  }

  /** stop, or the token's duration reached: the final measurement. */
  private async finish(reason: 'stop' | 'duration'): Promise<void> {
    if (this.phase !== 'running') return;
    this.phase = 'finishing';
    const { ctx } = this.deps;
    try {
      if (reason === 'duration')
        this.send({ t: 'error', code: 'duration_exceeded', message: `session reached its ${this.claims!.dur} s; frames past it are ignored`, fatal: false });
      while (this.drain(Infinity));
      const m = this.processed > 0 ? this.estimator!.finish() : undefined;
      this.estimator = undefined;
      const fields = m ? toFields(m, this.auxAgg) : emptyFields();
      if (!m || isPoor(m)) this.send({ t: 'error', code: 'insufficient_signal', message: 'not enough signal for a measurement', fatal: false });
      const settled = await settleJob(ctx, this.claims!.sid, {
        status: 'completed',
        fields,
        framesProcessed: m?.stats.framesUsed ?? 0,
        secondsProcessed: m?.durationSec ?? 0,
        stats: this.jobStats(m),
      });
      if (!settled) {
        this.fatal('session_already_used', 'the session was settled elsewhere (superseded by a fallback job)', CLOSE.policy, false);
        return;
      }
      const row = await getJob(ctx.db.db, this.claims!.sid);
      const stored = row?.measurement_id ? await getMeasurement(ctx.db.db, row.key_id, row.measurement_id) : undefined;
      if (!stored) throw new Error('stored measurement not found after settlement');
      this.send({ t: 'final', measurementId: stored.doc.id, measurement: stored.doc });
      this.close(CLOSE.normal);
    } catch (err) {
      this.internal(err);
    }
  }

  // ---- timers (the hub ticks every connection) --------------------------------------------------

  tick(now: number): void {
    const idleMs = this.deps.ctx.config.idleTimeoutSec * 1000;
    if (this.phase === 'hello' && now - this.openedAt > idleMs) {
      this.fatal('idle_timeout', `no hello within ${this.deps.ctx.config.idleTimeoutSec} s`, CLOSE.policy);
      return;
    }
    if (this.phase !== 'running') return;
    if (now - this.lastPacketAt > idleMs) {
      this.fatal('idle_timeout', `no packets for ${this.deps.ctx.config.idleTimeoutSec} s`, CLOSE.policy);
      return;
    }
    if (now - this.startedAt > this.claims!.dur * 1000 + WALL_GRACE_MS) {
      void this.finish('duration');
      return;
    }
    this.aux?.sweep(now);
    if (now - this.lastStatsAt >= STATS_INTERVAL_MS) this.sendStats(now);
  }

  /** Server shutdown: the session ends without a result (no resume in v1). */
  async shutdown(): Promise<void> {
    if (this.phase === 'closed') return;
    const wasLive = this.phase === 'running' || this.phase === 'finishing';
    this.phase = 'closed';
    this.queue.clear();
    this.estimator = undefined;
    this.sendRaw({ t: 'error', code: 'internal_error', message: 'server shutting down', fatal: true });
    this.ws.close(CLOSE.goingAway, 'server shutting down');
    if (wasLive) await this.settle({ status: 'aborted', code: 'disconnected', message: 'server shut down' });
    this.deps.onEnd();
  }

  // ---- endings --------------------------------------------------------------------------------

  /** A fatal error: `error` event, the session settles (failed or aborted), the socket closes. */
  private fatal(code: StreamErrorCode, message: string, closeCode: number, settle = true): void {
    if (this.phase === 'closed') return;
    this.sendRaw({ t: 'error', code, message, fatal: true });
    const status = code === 'idle_timeout' ? 'aborted' : 'failed';
    this.end(settle ? { status, code, message } : undefined, closeCode);
  }

  private internal(err: unknown): void {
    this.deps.log.error({ err, sessionId: this.claims?.sid }, 'streaming session failed');
    this.fatal('internal_error', 'internal error', CLOSE.internal);
  }

  private end(ending: Ending | undefined, closeCode: number): void {
    const wasLive = this.phase === 'running' || this.phase === 'finishing';
    this.phase = 'closed';
    this.queue.clear();
    this.estimator = undefined;
    this.close(closeCode);
    if (ending && wasLive) void this.settle(ending);
  }

  private onSocketClose(): void {
    if (this.phase === 'running') {
      this.phase = 'closed';
      this.queue.clear();
      this.estimator = undefined;
      void this.settle(this.socketError ?? { status: 'aborted', code: 'disconnected', message: 'socket closed without stop' });
    } else if (this.phase === 'hello' || this.phase === 'authorizing') {
      this.phase = 'closed';
    }
    // `finishing` continues: the client asked to stop, the measurement is stored either way.
    this.deps.onEnd();
  }

  private async settle(e: Ending): Promise<void> {
    if (!this.claims) return;
    try {
      await settleJob(this.deps.ctx, this.claims.sid, {
        status: e.status,
        code: e.code,
        message: e.message,
        framesProcessed: this.processed,
        secondsProcessed: this.processed > 1 ? (this.lastProcessedT - this.firstT) / 1e6 : 0,
        stats: this.jobStats(),
      });
    } catch (err) {
      this.deps.log.error({ err, sessionId: this.claims.sid }, 'settling a streaming session failed');
    }
  }

  // ---- outbound -------------------------------------------------------------------------------

  private sendStats(now: number): void {
    this.lastStatsAt = now;
    const newest = this.queue.newest()?.tMicros ?? this.lastProcessedT;
    const from = this.lastProcessedT >= 0 ? this.lastProcessedT : (this.queue.oldest()?.tMicros ?? newest);
    const backlogMs = Math.max(0, Math.round((newest - from) / 1000));
    this.send({ t: 'stats', received: this.received, dropped: this.dropped, backlogMs, processed: this.processed });
  }

  /** Live events are best effort: skipped while the client does not read its socket. */
  private sendLive(obj: object): void {
    if (this.ws.bufferedAmount > MAX_OUTBOUND_BYTES) return;
    this.send(obj);
  }

  private send(obj: object): void {
    if (this.phase === 'closed') return;
    this.sendRaw(obj);
  }

  private sendRaw(obj: object): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(obj));
  }

  private close(code: number): void {
    this.phase = 'closed';
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(code);
  }

  private jobStats(m?: EngineMeasurement): Record<string, unknown> {
    return {
      stream: { received: this.received, dropped: this.dropped, processed: this.processed, auxDropped: this.aux?.dropped ?? 0 },
      ...(m ? { engine: m.stats } : {}),
    };
  }
}

/** A well-formed type-1 packet (the same checks decodePacket makes for type 1). */
function isFaceCrop(data: Buffer): boolean {
  return data.length === FACE_CROP_PACKET_BYTES && data[0] === 1 && data[1] === PROTOCOL_VERSION;
}

/** decodePacket's type-1 result read straight from the Buffer (no DataView per frame). */
function faceCropOf(data: Buffer): FaceCropPacket {
  return { type: 1, seq: data.readUInt32LE(2), tMicros: data.readUInt32LE(6), flags: data.readUInt16LE(10), pixels: data.subarray(12, FACE_CROP_PACKET_BYTES) };
}

function emptyFields(): MeasurementFields {
  return {
    durationSec: 0,
    isComplete: false,
    quality: { level: 'poor', score: 0, usable: false },
    cardiac: { heartRate: null },
    hrv: null,
    respiratory: { breathingRate: null },
    stress: null,
    bloodPressure: null,
    spo2: null,
    emotion: null,
    gaze: null,
  };
}
