/**
 * Group commit for PostgreSQL's hot writes (docs/decisions.md, "Signed writes"). Items queued while
 * fewer than `maxInFlight` batches are running go out together at the end of the current turn of
 * the event loop; items queued while the limit is reached wait for a batch to finish and then go
 * out together. A batch is one statement, so one round trip and one commit (one WAL flush) serve
 * every item in it; each caller's promise settles only after that commit.
 *
 * `run` settles every item of its batch (an outcome per item, same order); if it throws, every item
 * of the batch gets that error.
 */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<I, R> {
  item: I;
  resolve(v: R): void;
  reject(e: unknown): void;
}

export interface BatcherOptions {
  /** At most this many items per batch (bounds a statement's size). */
  maxBatch: number;
  /** At most this many batches running at once (each holds a pooled connection). */
  maxInFlight: number;
}

export class Batcher<I, R> {
  private queue: Array<Pending<I, R>> = [];
  private scheduled = false;
  private inFlight = 0;
  private idle: Array<() => void> = [];

  constructor(
    private readonly run: (items: I[]) => Promise<Array<Outcome<R>>>,
    private readonly opts: BatcherOptions,
  ) {}

  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
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
        if (!this.queue.length && !this.inFlight) for (const r of this.idle.splice(0)) r();
      });
    }
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
