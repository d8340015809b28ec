/**
 * Process-wide streaming metrics: lag from a frame's arrival to the `hr` event it produced (the
 * figure the benchmark reports; an operator's gauge of whether this node keeps up), bounded ring;
 * and the count of frames run through the estimators (CPU per processed frame in the benchmark).
 */
const SIZE = 65_536;
const lags = new Float64Array(SIZE);
let n = 0;

export function recordHrLag(ms: number): void {
  lags[n % SIZE] = ms;
  n++;
}

/** The lags recorded since the last call (at most the last 65536), and resets. */
export function takeHrLags(): number[] {
  const count = Math.min(n, SIZE);
  const out = Array.from(lags.subarray(0, count));
  n = 0;
  return out;
}

let processed = 0;

export function recordFramesProcessed(count: number): void {
  processed += count;
}

/** Frames processed since the last call, and resets. */
export function takeFramesProcessed(): number {
  const out = processed;
  processed = 0;
  return out;
}
