/**
 * The unprocessed-frame queue of one session (spec: Limits, 15 frames): a fixed ring of frames and
 * their arrival times (performance.now()), so queueing and draining allocate nothing per frame.
 * The caller keeps `length < capacity` before `push` (it drops the oldest on overflow).
 */
export class FrameQueue<T> {
  private readonly items: Array<T | undefined>;
  private readonly arrivals: Float64Array;
  private head = 0;
  length = 0;
  /** Arrival time of the frame the last `shift()` returned. */
  shiftedArrival = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity).fill(undefined);
    this.arrivals = new Float64Array(capacity);
  }

  push(item: T, arrivedAt: number): void {
    if (this.length >= this.capacity) throw new RangeError('frame queue full');
    const i = (this.head + this.length) % this.capacity;
    this.items[i] = item;
    this.arrivals[i] = arrivedAt;
    this.length++;
  }

  /** Removes and returns the oldest frame (its arrival time in `shiftedArrival`). */
  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const i = this.head;
    const item = this.items[i];
    this.items[i] = undefined;
    this.shiftedArrival = this.arrivals[i];
    this.head = (i + 1) % this.capacity;
    this.length--;
    return item;
  }

  oldest(): T | undefined {
    return this.length > 0 ? this.items[this.head] : undefined;
  }

  newest(): T | undefined {
    return this.length > 0 ? this.items[(this.head + this.length - 1) % this.capacity] : undefined;
  }

  clear(): void {
    this.items.fill(undefined);
    this.head = 0;
    this.length = 0;
  }
}
