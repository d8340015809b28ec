/**
 * The frame-rate rule (spec: Limits "32 per second"; CLARIFICATIONS 26), two checks:
 *
 * - capture time: more than 32 type-1 frames whose own `tMicros` fall within any one-second span.
 *   Immune to network jitter: a burst of frames that were captured at 30 fps is fine.
 * - wall clock: frames arriving faster than real time. A token bucket of 64 frames (two seconds'
 *   worth) refilled at 32 per second: a stall followed by a catch-up burst passes, more than 32 per
 *   second sustained for about two seconds does not.
 */
import { STREAM_MAX_FPS } from '@vitals/protocol';

const SPAN_MICROS = 1_000_000;
const BUCKET_SECONDS = 2;

/** Wall-clock token bucket: `ratePerSec` sustained, bursts up to `seconds` worth. */
export class TokenBucket {
  private tokens: number;
  private readonly capacity: number;

  constructor(
    private lastMs: number,
    private readonly ratePerSec: number,
    seconds = BUCKET_SECONDS,
  ) {
    this.capacity = ratePerSec * seconds;
    this.tokens = this.capacity;
  }

  /** Refills, then tells whether one more event fits (without taking it). */
  has(nowMs: number): boolean {
    this.tokens = Math.min(this.capacity, this.tokens + ((nowMs - this.lastMs) * this.ratePerSec) / 1000);
    this.lastMs = nowMs;
    return this.tokens >= 1;
  }

  take(): void {
    this.tokens -= 1;
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
