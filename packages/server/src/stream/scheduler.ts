/**
 * Fair, bounded processing of queued frames across all sockets of the process. Messages are only
 * enqueued on arrival; the scheduler drains session queues round-robin in slices of at most
 * SLICE_MS and yields to the event loop between slices, so socket I/O keeps flowing under load and
 * a session that falls behind overflows its own 15-frame queue (oldest dropped) instead of
 * delaying everyone.
 */
const SLICE_MS = 8;
const FRAMES_PER_TURN = 4;

export interface Drainable {
  /** Processes up to `max` queued frames; returns whether work remains. */
  drain(max: number): boolean;
  scheduled: boolean;
}

export class FrameScheduler {
  /*
   * Two lists swapped each round, with their own counts: `array.length = 0` would hand V8's backing
   * store back and every round would grow a new one (garbage per round, at hundreds of sessions).
   */
  private ready: Array<Drainable | undefined> = [];
  private readyN = 0;
  private next: Array<Drainable | undefined> = [];
  private nextN = 0;
  private pending = false;
  private pendingSince = 0;

  /** How long queued work has waited for the event loop: the process's processing lag. */
  lagMs(): number {
    return this.pending ? performance.now() - this.pendingSince : 0;
  }

  schedule(s: Drainable): void {
    if (!s.scheduled) {
      s.scheduled = true;
      this.ready[this.readyN++] = s;
    }
    if (!this.pending) {
      this.pending = true;
      this.pendingSince = performance.now();
      setImmediate(this.run);
    }
  }

  private run = (): void => {
    this.pending = false;
    const deadline = performance.now() + SLICE_MS;
    let late = false;
    while (this.readyN > 0) {
      const ready = this.ready;
      // Sessions scheduled during this round (a drain that emits can cause one) go after it.
      const n = this.readyN;
      for (let i = 0; i < n; i++) {
        const s = ready[i]!;
        ready[i] = undefined;
        if (late || (late = performance.now() >= deadline)) {
          this.next[this.nextN++] = s;
          continue;
        }
        let more = false;
        try {
          more = s.drain(FRAMES_PER_TURN);
        } catch {
          more = false; // a session reports its own failures; the scheduler must survive them
        }
        if (more) this.next[this.nextN++] = s;
        else s.scheduled = false;
      }
      // Anything appended to `ready` while draining stays for the next round, after `next`.
      for (let i = n; i < this.readyN; i++) {
        this.next[this.nextN++] = ready[i];
        ready[i] = undefined;
      }
      // Swap the two lists (no new arrays per round).
      this.ready = this.next;
      this.readyN = this.nextN;
      this.next = ready;
      this.nextN = 0;
      if (late || performance.now() >= deadline) break;
    }
    if (this.readyN > 0) {
      this.pending = true;
      this.pendingSince = performance.now();
      setImmediate(this.run);
    }
  };
}
