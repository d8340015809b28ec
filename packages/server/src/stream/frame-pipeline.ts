/**
 * A running session's packets, from arrival to the estimator (spec: Limits; CLARIFICATIONS 26): the
 * message and frame-rate rules, the 15-frame queue (oldest dropped on overflow), the estimator and the counters
 * the job's stats and `stats` events report. Owned by its session (session.ts), which created it at
 * `ready` and alone calls it; the session decides what an admission means (stats, finish, fatal).
 */
import { STREAM_QUEUE_FRAMES, faceCropTMicros, type FaceCropPacket, type Packet } from '@vitals/protocol';
import {
  StreamingEstimator,
  type AnalyzeOptions,
  type EngineEvent,
  type EngineMeasurement,
  type RgbTrace,
} from '@vitals/engine';
import { FrameRateGuard, TokenBucket } from './rate-guard.js';
import { FrameQueue } from './frame-queue.js';
import { recordFramesProcessed } from './metrics.js';
import { MAX_MESSAGES_PER_SEC } from './limits.js';

/** What became of an arriving frame. */
export type Admission =
  | { kind: 'queued' }
  /** Its timestamp did not increase: dropped and counted, not an error. */
  | { kind: 'stale' }
  | { kind: 'rate'; reason: string }
  /** Past the token's duration (capture time, or the wall clock the session measured). */
  | { kind: 'duration' };

/*
 * The admissions without a reason are shared constants: a frame's way in allocates nothing of its
 * own (the streaming benchmark's heap profile put the per-frame objects and closures of this path
 * first among the allocations the server controls; GC was about a third of its CPU).
 */
const QUEUED: Admission = Object.freeze({ kind: 'queued' });
const STALE: Admission = Object.freeze({ kind: 'stale' });
const DURATION: Admission = Object.freeze({ kind: 'duration' });

/** What admit asks of the session (the session itself implements it: no closures per frame). */
export interface AdmitHost {
  /** The process keeps up, so a full queue makes room by processing one frame instead of dropping. */
  mayDrainInline(): boolean;
  /** The oldest frame was just dropped (called before the new one is queued). */
  overflowed(): void;
}

export class FramePipeline {
  /** Unprocessed frames with their performance.now() arrival times (decoded into recycled packets). */
  private readonly queue = new FrameQueue(STREAM_QUEUE_FRAMES);
  private estimator?: StreamingEstimator = new StreamingEstimator();
  private readonly guard: FrameRateGuard;
  /** Every binary message, whatever its type: a flood guard. */
  private readonly messages: TokenBucket;
  private received = 0;
  private dropped = 0;
  private processed = 0;
  private firstT = -1;
  private lastT = -1;
  private lastProcessedT = -1;

  constructor(
    private readonly durMicros: number,
    wallNow: number,
    private readonly emit: (e: EngineEvent, arrivedAt: number) => void,
  ) {
    this.guard = new FrameRateGuard(wallNow);
    this.messages = new TokenBucket(wallNow, MAX_MESSAGES_PER_SEC);
  }

  /** Any binary message: a reason when it breaks the flood guard, else counted. */
  admitMessage(wall: number): string | null {
    if (!this.messages.has(wall)) return `more than ${MAX_MESSAGES_PER_SEC} binary messages per second`;
    this.messages.take();
    return null;
  }

  /** Quality and telemetry packets: cheap, straight to the estimator. */
  signal(p: Exclude<Packet, FaceCropPacket>): void {
    this.estimator?.push(p as Parameters<StreamingEstimator['push']>[0]);
  }

  /**
   * One face crop: a well-formed type-1 message (isFaceCropPacket), read in place and, when queued,
   * decoded into a packet of the queue's own (the message is not kept). `pastWallDuration`: the
   * session's wall clock passed the token's duration. A full queue asks the host whether it may
   * drain one frame inline (a burst from a client catching up is not a server falling behind), else
   * drops the oldest and tells the host.
   */
  admit(bytes: Uint8Array, wall: number, pastWallDuration: boolean, host: AdmitHost): Admission {
    this.received++;
    const tMicros = faceCropTMicros(bytes);
    if (tMicros <= this.lastT) {
      this.dropped++; // timestamps must increase; the estimator would reject it anyway
      return STALE;
    }
    const why = this.guard.admit(tMicros, wall);
    if (why) return { kind: 'rate', reason: why };
    if (this.firstT < 0) this.firstT = tMicros;
    if (tMicros - this.firstT >= this.durMicros || pastWallDuration) return DURATION;
    this.lastT = tMicros;
    if (this.queue.length >= STREAM_QUEUE_FRAMES && host.mayDrainInline()) this.drain(1);
    if (this.queue.length >= STREAM_QUEUE_FRAMES) {
      // Spec: Limits, unprocessed-frame queue: drop the oldest, report with `stats`.
      this.queue.shift();
      this.dropped++;
      host.overflowed();
    }
    this.queue.push(bytes, wall);
    return QUEUED;
  }

  /** Runs up to `max` queued frames through the estimator; returns whether work remains. */
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

  /** Every queued frame processed, then the estimator's result (`undefined`: no frame was processed). */
  finish(): EngineMeasurement | undefined {
    while (this.drain(Infinity));
    const m = this.processed > 0 ? this.estimator!.finish() : undefined;
    this.estimator = undefined;
    return m;
  }

  /**
   * `finish()` with the final analysis run by `analyze` (`analyzeTrace` of the estimator's input):
   * the server runs a long capture's on a thread (batch/media-threads.ts). Same measurement.
   */
  async finishWith(
    analyze: (input: { trace: RgbTrace; opts: AnalyzeOptions }) => Promise<EngineMeasurement>,
  ): Promise<EngineMeasurement | undefined> {
    while (this.drain(Infinity));
    const estimator = this.estimator;
    this.estimator = undefined;
    return this.processed > 0 ? analyze(estimator!.finishInput()) : undefined;
  }

  /** The session ended: nothing queued is processed any more. */
  stop(): void {
    this.queue.clear();
    this.estimator = undefined;
  }

  counts(): { received: number; dropped: number; processed: number } {
    return { received: this.received, dropped: this.dropped, processed: this.processed };
  }

  /** The first to the last processed capture time (the seconds an ended session records). */
  span(): { processed: number; firstT: number; lastProcessedT: number } {
    return { processed: this.processed, firstT: this.firstT, lastProcessedT: this.lastProcessedT };
  }

  /** `stats.backlogMs`: the last processed (or oldest queued) frame to the newest queued. */
  backlogMs(): number {
    const newest = this.queue.newest()?.tMicros ?? this.lastProcessedT;
    const from = this.lastProcessedT >= 0 ? this.lastProcessedT : (this.queue.oldest()?.tMicros ?? newest);
    return Math.max(0, Math.round((newest - from) / 1000));
  }
}
