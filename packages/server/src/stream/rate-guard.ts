/**
 * The frame-rate rule (spec: Limits "32 per second"; CLARIFICATIONS 26), two checks:
 *
 * - capture time: more than 32 type-1 frames whose own `tMicros` fall within any one-second span.
 *   Immune to network jitter: a burst of frames that were captured at 30 fps is fine.
 * - wall clock: frames arriving faster than real time. At most 32 per second of wall clock since
 *   `ready` plus 64 (two seconds' worth): a stall followed by a catch-up burst passes, more than 32
 *   per second sustained for about two seconds does not.
 */
import { STREAM_MAX_FPS } from '@vitals/protocol';

const SPAN_MICROS = 1_000_000;
const BUCKET_SECONDS = 2;

/**
 * Wall-clock budget: at most `ratePerSec` per second since the start, plus `seconds` worth of
 * slack. Cumulative on purpose: a server that could not read its socket for a while (a stall on
 * either side) then reads a backlog at once, and that backlog is not "faster than real time".
 */
export class TokenBucket {
  private used = 0;
  private readonly slack: number;

  constructor(
    private readonly startMs: number,
    private readonly ratePerSec: number,
    seconds = BUCKET_SECONDS,
  ) {
    this.slack = ratePerSec * seconds;
  }

  /** Whether one more event fits the budget (without taking it). */
  has(nowMs: number): boolean {
    return this.used + 1 <= this.slack + ((nowMs - this.startMs) * this.ratePerSec) / 1000;
  }

  take(): void {
    this.used += 1;
  }
}

export class FrameRateGuard {
  /** Ring of the last `maxFps` accepted timestamps. */
  private readonly ring: Float64Array;
  private count = 0;
  private head = 0;
  private readonly bucket: TokenBucket;

  constructor(
    nowMs: number,
    private readonly maxFps = STREAM_MAX_FPS,
  ) {
    this.ring = new Float64Array(maxFps);
    this.bucket = new TokenBucket(nowMs, maxFps);
  }

  /** Returns a reason when the frame breaks the rule, else records it. Timestamps must increase. */
  admit(tMicros: number, nowMs: number): string | null {
    if (!this.bucket.has(nowMs)) return `frames arrive faster than ${this.maxFps} per second of wall clock`;
    // The oldest of the last `maxFps` frames: with this one, maxFps + 1 frames inside one second.
    if (this.count === this.maxFps && tMicros - this.ring[this.head] < SPAN_MICROS)
      return `more than ${this.maxFps} frames within one second of capture time`;
    this.bucket.take();
    this.ring[this.head] = tMicros;
    this.head = (this.head + 1) % this.maxFps;
    if (this.count < this.maxFps) this.count++;
    return null;
  }
}
