/**
 * Retry rules (spec: Errors, 429 "clients retry with exponential backoff"; CLARIFICATIONS 8).
 * Only 429 and 503 are retried: every other 4xx is the caller's to fix, and retrying a 5xx on a
 * non-idempotent POST could store twice. Each retry is signed anew (fresh nonce and timestamp),
 * because a nonce is single-use within the 300 s window.
 */

export interface RetryPolicy {
  /** Retries after the first attempt. Default 3. */
  maxRetries: number;
  /** First backoff step. Default 500 ms. */
  baseDelayMs: number;
  /** Ceiling of one exponential step. Default 8 s. */
  maxDelayMs: number;
  /** A `RateLimit-Reset` longer than this is not waited for: the 429 is thrown. Default 60 s. */
  maxResetWaitMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxResetWaitMs: 60_000,
};

export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 503;
}

/** Parses `RateLimit-Reset` or `Retry-After` in seconds (an HTTP-date `Retry-After` gives undefined). */
export function parseResetSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  const n = Number(value.trim());
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * Delay before retry number `attempt` (0-based). Exponential with "equal jitter": half the step is
 * fixed, half random, so clients that failed together spread out. A 429 with `RateLimit-Reset`
 * (or a 503 with `Retry-After`) waits at least that long. Returns `undefined` when the wait would
 * be longer than `maxWaitMs` (for a 429 `maxResetWaitMs`; the transport passes `maxDelayMs` for a
 * 503, so a short `Retry-After` is honoured even by a client that never waits out a rate limit).
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  resetSec: number | undefined,
  random: () => number = Math.random,
  maxWaitMs: number = policy.maxResetWaitMs,
): number | undefined {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const backoff = step / 2 + random() * (step / 2);
  if (resetSec === undefined) return Math.round(backoff);
  const resetMs = resetSec * 1000;
  if (resetMs > maxWaitMs) return undefined;
  // Past the reset plus a little jitter, never sooner than the backoff.
  return Math.round(Math.max(resetMs + random() * 250, backoff));
}
