/** The streaming endpoint's close codes and per-connection limits (docs/streaming.md). */

/** Close codes (docs/streaming.md). */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  protocol: 1002,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
} as const;

/** Wall-clock slack past the token's duration before `duration_exceeded` (camera start, jitter). */
export const WALL_GRACE_MS = 5000;
/** Periodic `stats` events, wall clock. */
export const STATS_INTERVAL_MS = 2000;
/** At most one overflow-triggered `stats` per this many ms. */
export const OVERFLOW_STATS_MIN_MS = 250;
/** Frames are processed inline instead of dropped while the scheduler lags less than this. */
export const INLINE_DRAIN_MAX_LAG_MS = 100;
/** All binary messages together (frames, telemetry, quality, aux chunks): a flood guard. */
export const MAX_MESSAGES_PER_SEC = 256;
/** Live events are skipped while the client is not reading (outbound buffer over this). */
export const MAX_OUTBOUND_BYTES = 256 * 1024;
