/**
 * Group commit for PostgreSQL's hot writes (docs/decisions.md, "Signed writes"). Items queued while
 * fewer than `maxInFlight` batches are running go out together at the end of the current turn of
 * the event loop; items queued while the limit is reached wait for a batch to finish and then go
 * out together. A batch is one statement, so one round trip and one commit (one WAL flush) serve
 * every item in it; each caller's promise settles only after that commit.
 *
 * `run` settles every item of its batch (an outcome per item, same order); if it throws, every item
 * of the batch gets that error.
 *
 * The queue is bounded: when the database stalls, batches stop coming back and every queued item
 * holds a request. Past `maxQueued` waiting items (beyond those the next flush sends at once) an
 * item is refused at once with `StoreBusyError`, which the app answers 503 (unavailable.ts); and an
 * item that has waited `maxWaitMs` for a batch is refused the same way, as pg-pool refuses a
 * checkout that waited its connect timeout (a batch slot is a pooled connection).
 */
import { StoreBusyError } from './unavailable.js';

export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<I, R> {
  item: I;
  resolve(v: R): void;
  reject(e: unknown): void;
  /** performance.now() when queued (monotonic). */
  since: number;
}

export interface BatcherOptions {
  /** At most this many items per batch (bounds a statement's size). */
  maxBatch: number;
  /** At most this many batches running at once (each holds a pooled connection). */
  maxInFlight: number;
  /** At most this many items waiting for a free batch; more are refused. Default 4096. */
  maxQueued?: number;
  /** An item still waiting for a batch after this many ms is refused. Default: no limit. */
  maxWaitMs?: number;
}

export const DEFAULT_MAX_QUEUED = 4096;

export class Batcher<I, R> {
  private queue: Array<Pending<I, R>> = [];
  private scheduled = false;
  private inFlight = 0;
  private idle: Array<() => void> = [];
  private expiry: NodeJS.Timeout | undefined;

  constructor(
    private readonly run: (items: I[]) => Promise<Array<Outcome<R>>>,
    private readonly opts: BatcherOptions,
  ) {}

  add(item: I): Promise<R> {
    // Items the next flush sends at once (free batch slots) do not wait; past them, maxQueued may.
    const free = (this.opts.maxInFlight - this.inFlight) * this.opts.maxBatch;
    if (this.queue.length >= (this.opts.maxQueued ?? DEFAULT_MAX_QUEUED) + free) {
      return Promise.reject(new StoreBusyError());
    }
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject, since: performance.now() });
      this.schedule();
      this.armExpiry();
    });
  }

  /** Settles once every item queued so far has been settled (before closing the pool). */
  drain(): Promise<void> {
    if (!this.queue.length && !this.inFlight) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.opts.maxInFlight || !this.queue.length) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queue.length && this.inFlight < this.opts.maxInFlight) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.inFlight++;
      void this.settle(batch).finally(() => {
        this.inFlight--;
        this.schedule();
        this.notifyIdle();
      });
    }
  }

  private notifyIdle(): void {
    if (!this.queue.length && !this.inFlight) for (const r of this.idle.splice(0)) r();
  }

  /** One timer for the oldest waiting item; items leave in order, so the front is the oldest. */
  private armExpiry(): void {
    const wait = this.opts.maxWaitMs;
    if (!wait || this.expiry || !this.queue.length) return;
    this.expiry = setTimeout(
      () => {
        this.expiry = undefined;
        const now = performance.now();
        let n = 0;
        while (n < this.queue.length && now - this.queue[n].since >= wait) n++;
        for (const p of this.queue.splice(0, n)) p.reject(new StoreBusyError());
        this.armExpiry();
        this.notifyIdle();
      },
      Math.max(0, this.queue[0].since + wait - performance.now()),
    );
    this.expiry.unref();
  }

  private async settle(batch: Array<Pending<I, R>>): Promise<void> {
    let outcomes: Array<Outcome<R>>;
    try {
      outcomes = await this.run(batch.map((p) => p.item));
    } catch (error) {
      for (const p of batch) p.reject(error);
      return;
    }
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (o?.ok) p.resolve(o.value);
      else p.reject(o ? o.error : new Error('batch returned no outcome for an item'));
    });
  }
}
