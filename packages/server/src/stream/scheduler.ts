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
  private ready: Drainable[] = [];
  private next: Drainable[] = [];
  private pending = false;
  private pendingSince = 0;

  /** How long queued work has waited for the event loop: the process's processing lag. */
  lagMs(): number {
    return this.pending ? performance.now() - this.pendingSince : 0;
  }

  schedule(s: Drainable): void {
    if (!s.scheduled) {
      s.scheduled = true;
      this.ready.push(s);
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
    while (this.ready.length > 0) {
      const ready = this.ready;
      for (let i = 0; i < ready.length; i++) {
        const s = ready[i];
        if (late || (late = performance.now() >= deadline)) {
          this.next.push(s);
          continue;
        }
        let more = false;
        try {
          more = s.drain(FRAMES_PER_TURN);
        } catch {
          more = false; // a session reports its own failures; the scheduler must survive them
        }
        if (more) this.next.push(s);
        else s.scheduled = false;
      }
      // Swap the two lists (no new arrays per round).
      ready.length = 0;
      this.ready = this.next;
      this.next = ready;
      if (late || performance.now() >= deadline) break;
    }
    if (this.ready.length > 0) {
      this.pending = true;
      this.pendingSince = performance.now();
      setImmediate(this.run);
    }
  };
}
