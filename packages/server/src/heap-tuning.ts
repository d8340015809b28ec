/**
 * The server process's garbage-collection pace (issue 18, target 3). Every WebSocket message a
 * live session sends arrives in an ArrayBuffer of its own (Node allocates one per socket read): at
 * 300 sessions of 30 fps about 9,000 a second, ~36 MB/s of short-lived memory outside V8's heap.
 * V8 counts those bytes against the heap's limit for its next full collection, which after each one
 * it sets to the live size times a growing factor it picks from recent GC and allocation speeds:
 * on a server whose live heap is the sessions' estimators (~38 MB at 300 sessions) it chose about
 * 1.3, so the read buffers started a full mark-compact two to three times a second (`--trace-gc`:
 * 53 mark-compacts and 59 scavenges over a 300-session step, hardly a scavenge in its steady part),
 * each marking the whole heap on the main thread and V8's helper threads. The bare `ws` server of the streaming benchmark meets the same buffers with
 * a heap of a few MB, where a full collection costs little.
 *
 * A fixed growing factor (V8's `--heap-growing-percent`) keeps the limit well above the live heap,
 * so those buffers are freed by the far cheaper young-generation collections in between. The price
 * is memory that is garbage between two full collections: up to `percent` of the live heap (at most
 * about 75 MB at 300 sessions with the default 200; the streaming benchmark reports the server's
 * resident memory). The flag is process-wide, so the process's worker threads (video jobs) get the
 * same factor. docs/operating.md and docs/streaming.md give the figures.
 */
import v8 from 'node:v8';

let applied: number | null = null;

/** The percent `tuneHeap` last set in this process (null: never called). */
export function appliedHeapGrowingPercent(): number | null {
  return applied;
}

/**
 * Sets V8's heap growing factor for this process to 1 + percent/100 (0: V8's own, dynamic choice).
 * V8 reads the flag whenever it recomputes the limit after a full collection, so it takes effect
 * from the next one. Called once a server process starts (serve, each cluster process).
 */
export function tuneHeap(percent: number): void {
  if (applied === percent) return;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  applied = percent;
}
