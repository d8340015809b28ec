/**
 * Fixed-window counters kept in process memory (spec: Rate limits — "rate counters are in-process
 * memory and reset on every deploy"). One instance per scope: per-key, logs, fallback endpoints.
 */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (CLARIFICATIONS 8). */
  resetSec: number;
}

interface Window {
  start: number;
  count: number;
}

export class RateLimiter {
  private windows = new Map<string, Window>();
  private lastSweep = 0;

  constructor(private readonly windowMs: number) {}

  hit(key: string, limit: number, now: number): RateDecision {
    this.sweep(now);
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(key, w);
    }
    const resetSec = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    if (w.count >= limit) return { allowed: false, limit, remaining: 0, resetSec };
    w.count++;
    return { allowed: true, limit, remaining: limit - w.count, resetSec };
  }

  /**
   * Takes back one allowed hit made at `at`, if its window is still the current one: a call counted
   * here and then refused for a reason the spec ranks before the limit (a reused nonce found later)
   * does not use up the key's budget, just as if it had been refused before being counted.
   */
  refund(key: string, at: number): void {
    const w = this.windows.get(key);
    if (w && at >= w.start && at - w.start < this.windowMs && w.count > 0) w.count--;
  }

  /** Drops finished windows now and then so memory stays flat. */
  private sweep(now: number): void {
    if (now - this.lastSweep < this.windowMs) return;
    this.lastSweep = now;
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
}

export function rateHeaders(d: RateDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(d.limit),
    'RateLimit-Remaining': String(d.remaining),
    'RateLimit-Reset': String(d.resetSec),
  };
}
