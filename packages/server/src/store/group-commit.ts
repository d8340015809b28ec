/**
 * Group commit for the embedded store. SQLite has one writer and Kysely runs every query on one
 * connection, so concurrent write units queue anyway; here the units that arrive in the same turn
 * of the event loop share one transaction. A commit's fixed cost (locks, WAL header, the pager's
 * end-of-transaction work) and the pages every unit touches (the right-most leaves of the rowid
 * tables and time-ordered indexes) are then paid once per batch instead of once per unit
 * (docs/benchmarks.md, API; docs/decisions.md).
 *
 * Each unit runs inside its own savepoint: a unit that throws is rolled back alone and its caller
 * gets the error; the others still commit. A `single` unit (one statement, or statements each safe
 * alone, like spending a nonce) skips the savepoint: a failing statement undoes only itself. Every caller's promise settles only after the commit,
 * so nothing is acknowledged before it is in the WAL. A unit must use only the `tx` it is given
 * (a query on the outer handle would wait for the connection this transaction holds).
 *
 * The queue is bounded: when writes arrive faster than commits take them (overload, a slow disk;
 * better-sqlite3 is synchronous, so requests are read between statements and batches) every unit
 * not yet committed holds a request. Batches that cannot start wait on the connection, not in
 * `queue`, so the bound counts units accepted and not yet settled: past `maxQueued` of them beyond
 * one batch, a new unit is refused at once with `StoreBusyError` (answered 503, unavailable.ts),
 * as the PostgreSQL batcher refuses one (batcher.ts).
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { DEFAULT_MAX_QUEUED } from './batcher.js';
import { StoreBusyError } from './unavailable.js';

export type WriteUnit<T> = (tx: Kysely<Database>) => Promise<T>;

interface Pending {
  unit: WriteUnit<unknown>;
  /** One statement, or statements each safe alone: no savepoint needed (statements are atomic). */
  single: boolean;
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

const SAVEPOINT = CompiledQuery.raw('savepoint unit');
const RELEASE = CompiledQuery.raw('release savepoint unit');
const ROLLBACK_TO = CompiledQuery.raw('rollback to savepoint unit');

/** At most this many units share one transaction (bounds how long the writer is held). */
export const MAX_BATCH = 64;

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private inFlight: Promise<void> = Promise.resolve();
  /** Units accepted and not yet settled (queued, or in a batch that has not committed). */
  private unsettled = 0;

  /**
   * `inTransaction`: whether the connection still has a transaction open (better-sqlite3's
   * `inTransaction`). Some failures (SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY, SQLITE_NOMEM) may make
   * SQLite roll the whole transaction back on its own; the units after such a failure would then run
   * in autocommit, each stored at once, while the batch's COMMIT fails and every caller hears an
   * error. So after a failed unit the batch goes on only if the transaction is still open.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly maxQueued = DEFAULT_MAX_QUEUED,
    private readonly inTransaction: () => boolean = () => true,
  ) {}

  run<T>(unit: WriteUnit<T>, single = false): Promise<T> {
    if (this.unsettled >= this.maxQueued + MAX_BATCH) return Promise.reject(new StoreBusyError());
    this.unsettled++;
    const settle = (): void => {
      this.unsettled--;
    };
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        unit,
        single,
        resolve: (v) => {
          settle();
          resolve(v as T);
        },
        reject: (e) => {
          settle();
          reject(e);
        },
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Settles once every unit queued so far has been committed or rejected (before closing). */
  async drain(): Promise<void> {
    while (this.scheduled || this.queue.length) await new Promise((r) => setImmediate(r));
    await this.inFlight;
  }

  private flush(): Promise<void> {
    this.inFlight = this.commitBatch();
    return this.inFlight;
  }

  private async commitBatch(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    if (this.queue.length) setImmediate(() => void this.flush());
    else this.scheduled = false;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    // A unit's failure that took the whole transaction with it: every caller of the batch gets it.
    let lost: { error: unknown } | undefined;
    try {
      await this.db.transaction().execute(async (tx) => {
        for (const p of batch) {
          if (!p.single) await tx.executeQuery(SAVEPOINT);
          try {
            const value = await p.unit(tx);
            if (!p.single) await tx.executeQuery(RELEASE);
            outcomes.push({ ok: true, value });
          } catch (error) {
            if (!this.inTransaction()) {
              lost = { error };
              throw error;
            }
            if (!p.single) {
              await tx.executeQuery(ROLLBACK_TO);
              await tx.executeQuery(RELEASE);
            }
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      // The commit itself failed (or a rollback did, or SQLite rolled the transaction back after a
      // unit's failure; Kysely's own ROLLBACK then fails too): nothing of this batch is stored.
      for (const p of batch) p.reject(lost ? lost.error : error);
      return;
    }
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (o.ok) p.resolve(o.value);
      else p.reject(o.error);
    });
  }
}
