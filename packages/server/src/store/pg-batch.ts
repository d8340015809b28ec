/**
 * PostgreSQL's group commit for the writes of signed calls (docs/decisions.md, "Signed writes"):
 * calls that arrive together (batcher.ts) are written by one multi-row statement, so one round trip
 * and one commit (one WAL flush) serve the whole batch instead of each call paying its own. A
 * statement is atomic, and every caller hears back only after its commit.
 *
 * The rows travel as one JSON array per table, one statement text for every batch size
 * (pg-batch-sql.ts).
 *
 * Each caller keeps its own outcome: when a batch statement fails in the database (so nothing of
 * it is stored), its items are retried one statement each, so only the item at fault gets the error
 * (pg-batch-groups.ts).
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { Batcher, type Outcome } from './batcher.js';
import { insertAllInOneStatement, shapeOf, type InsertRow } from './insert-all.js';
import type { NonceSpend } from './nonces.js';
import { insertManyQuery, spendAndInsertManyQuery, spendMany, type Prepared } from './pg-batch-sql.js';
import { groupBy, itemMayBeAtFault, nonceKey, nonceRow, settle, spendDistinct } from './pg-batch-groups.js';

export interface PgBatchedWrites {
  spendNonce(spend: NonceSpend): Promise<boolean>;
  insertAll(rows: readonly InsertRow[]): Promise<void>;
  spendNonceAndInsert(spend: NonceSpend, rows: readonly InsertRow[]): Promise<boolean>;
  drain(): Promise<void>;
}

/** At most this many calls per statement; 64 x a measurement's ~2 KB keeps a statement well under 1 MB. */
const MAX_BATCH = 64;
/**
 * Batches of one kind in flight at once. Calls that arrive while the limit is reached wait and then
 * go together (larger batches under load, fewer commits); two let one batch overlap the other's
 * WAL flush.
 */
const MAX_IN_FLIGHT = 2;

/** Values JSON carries exactly into the tables' columns (text, finite numbers, null). */
const isPlain = (v: unknown): boolean =>
  v === null || v === undefined || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
const plainRows = (rows: readonly InsertRow[]): boolean => rows.every((r) => Object.values(r.values).every(isPlain));

interface Guarded {
  spend: NonceSpend;
  rows: readonly InsertRow[];
}

/** `limits`: how many writes of one kind may wait for a batch, and how long (batcher.ts); then StoreBusyError. */
export function pgBatchedWrites(
  db: Kysely<Database>,
  limits: { maxQueued?: number; maxWaitMs?: number } = {},
): PgBatchedWrites {
  const insertAlone = insertAllInOneStatement(db);
  const opts = { maxBatch: MAX_BATCH, maxInFlight: MAX_IN_FLIGHT, ...limits };
  const inserts = new Map<string, Prepared>();
  const guarded = new Map<string, Prepared>();
  const queryFor = (
    cache: Map<string, Prepared>,
    rows: readonly InsertRow[],
    make: (r: readonly InsertRow[]) => Prepared,
  ) => {
    const shape = shapeOf(rows);
    let q = cache.get(shape);
    if (!q) {
      q = make(rows);
      cache.set(shape, q);
    }
    return q;
  };

  /** Per call, the JSON arrays of a batch of calls of one shape (t0, t1, ...). */
  const tableArrays = (units: Array<readonly InsertRow[]>): Record<string, string> => {
    const values: Record<string, string> = {};
    units[0].forEach((_, t) => (values[`t${t}`] = JSON.stringify(units.map((u) => u[t].values))));
    return values;
  };

  const insertGroup = async (units: Array<readonly InsertRow[]>): Promise<void> => {
    await queryFor(inserts, units[0], insertManyQuery).execute(db, tableArrays(units));
  };

  /** Calls of one shape with distinct nonces, sorted: which of them were stored. */
  const guardedGroup = async (calls: Guarded[]): Promise<boolean[]> => {
    const n = JSON.stringify(calls.map((c) => nonceRow(c.spend)));
    const res = await queryFor(guarded, calls[0].rows, spendAndInsertManyQuery).execute(db, {
      n,
      ttl: calls[0].spend.ttlMs,
      ...tableArrays(calls.map((c) => c.rows)),
    });
    const stored = calls.map(() => false);
    for (const r of res.rows as Array<{ i: number }>) stored[Number(r.i) - 1] = true;
    return stored;
  };

  const nonces = new Batcher<NonceSpend, boolean>(async (items) => {
    return spendDistinct(
      items,
      (i) => items[i].ttlMs,
      async (group) => {
        const res = await spendMany.execute(db, {
          n: JSON.stringify(group.map((i) => nonceRow(items[i]))),
          ttl: items[group[0]].ttlMs,
        });
        const spent = new Set(
          (res.rows as Array<{ key_id: string; nonce: string }>).map((r) => `${r.key_id}\u0000${r.nonce}`),
        );
        return group.map((i) => spent.has(nonceKey(items[i])));
      },
    );
  }, opts);

  const insertBatch = new Batcher<readonly InsertRow[], void>(async (units) => {
    const outcomes: Array<Outcome<void>> = new Array(units.length);
    await Promise.all(
      groupBy(
        units.map((_, i) => i),
        (i) => shapeOf(units[i]),
      ).map(async (idx) => {
        try {
          await insertGroup(idx.map((i) => units[i]));
          for (const i of idx) outcomes[i] = { ok: true, value: undefined };
        } catch (err) {
          // Each group answers for itself: another group of the batch may still be committing.
          if (idx.length === 1 || !itemMayBeAtFault(err)) {
            for (const i of idx) outcomes[i] = { ok: false, error: err };
            return;
          }
          const alone = await Promise.all(idx.map((i) => settle(insertGroup([units[i]]))));
          idx.forEach((i, k) => (outcomes[i] = alone[k]));
        }
      }),
    );
    return outcomes;
  }, opts);

  const guardedBatch = new Batcher<Guarded, boolean>(async (calls) => {
    return spendDistinct(
      calls.map((c) => c.spend),
      (i) => `${calls[i].spend.ttlMs} ${shapeOf(calls[i].rows)}`,
      (group) => guardedGroup(group.map((i) => calls[i])),
    );
  }, opts);

  return {
    spendNonce: (s) => nonces.add(s),
    // Values JSON cannot carry exactly (NaN, bigint, bytes) take a statement of their own.
    insertAll: (rows) => (plainRows(rows) ? insertBatch.add(rows) : insertAlone(rows)),
    spendNonceAndInsert: (spend, rows) =>
      plainRows(rows)
        ? guardedBatch.add({ spend, rows })
        : Promise.reject(new Error('spendNonceAndInsert stores text, finite numbers and null only')),
    drain: async () => {
      await nonces.drain();
      await insertBatch.drain();
      await guardedBatch.drain();
    },
  };
}
