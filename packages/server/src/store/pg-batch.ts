/**
 * PostgreSQL's group commit for the writes of signed calls (docs/decisions.md, "Signed writes"):
 * calls that arrive together (batcher.ts) are written by one multi-row statement, so one round trip
 * and one commit (one WAL flush) serve the whole batch instead of each call paying its own. A
 * statement is atomic, and every caller hears back only after its commit.
 *
 * The rows travel as one JSON array per table, expanded by `json_populate_recordset` with the
 * table's own row type: the statement text is the same for every batch size, so it is parsed and
 * planned once per connection (compiled.ts names it), and the column types come from the table.
 *
 * Each caller keeps its own outcome: when a batch statement fails in the database (so nothing of
 * it is stored), its items are retried one statement each, so only the item at fault gets the error.
 */
import pg from 'pg';
import { sql, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { prepare, type PreparedQuery } from './compiled.js';
import { Batcher, type Outcome } from './batcher.js';
import { insertAllInOneStatement, shapeOf, type InsertRow } from './insert-all.js';
import type { NonceSpend } from './nonces.js';

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

type Prepared = PreparedQuery<string, unknown>;

/** A raw statement as prepare() takes it (compiled for the database it first runs on). */
const compilable = <R>(db: Kysely<Database>, q: RawBuilder<R>): Compilable<R> => ({
  compile: () => q.compile(db),
});

/**
 * Spends the nonces of a batch, read from `source` (rows of the nonces table). A nonce whose row
 * exists is taken over only if that row has expired (`expires_at <= now`, with now = the new expiry
 * - ttl), as nonces.ts does in two statements. The rows come back for the nonces spent now; the
 * others are replays.
 */
const spendFrom = (source: RawBuilder<unknown>, ttl: unknown) =>
  sql`insert into nonces (key_id, nonce, expires_at)
    select key_id, nonce, expires_at from ${source}
    on conflict (key_id, nonce) do update set expires_at = excluded.expires_at
    where nonces.expires_at <= excluded.expires_at - ${ttl}::bigint
    returning key_id, nonce`;

const spendMany = prepare(['n', 'ttl'], (db, p) =>
  compilable(
    db,
    sql<{
      key_id: string;
      nonce: string;
    }>`${spendFrom(sql`json_populate_recordset(null::nonces, ${p.n}::json)`, p.ttl)}`,
  ),
);

/** `insert into t (cols) select cols from json_populate_recordset(null::t, $json)`, optionally only the rows numbered in `fresh`. */
function insertFromJson(row: InsertRow, json: unknown, onlyFresh: boolean): RawBuilder<unknown> {
  const cols = sql.join(Object.keys(row.values).map((c) => sql.ref(c)));
  const table = sql.table(row.table);
  const from = sql`json_populate_recordset(null::${table}, ${json}::json)`;
  return onlyFresh
    ? sql`insert into ${table} (${cols}) select ${cols} from ${from} with ordinality as r where r.ordinality in (select i from fresh)`
    : sql`insert into ${table} (${cols}) select ${cols} from ${from}`;
}

/** Rows of several tables, all or none: `with w0 as (insert ...) insert ...` (t0 holds every call's first row, t1 its second, ...). */
function insertManyQuery(sample: readonly InsertRow[]): Prepared {
  return prepare(
    sample.map((_, t) => `t${t}`),
    (db, p) => {
      const inserts = sample.map((r, t) => insertFromJson(r, p[`t${t}`], false));
      const last = inserts.length - 1;
      const ctes = inserts.slice(0, -1).map((q, t) => sql`${sql.raw(`w${t}`)} as (${q})`);
      return compilable(db, ctes.length ? sql`with ${sql.join(ctes)} ${inserts[last]}` : inserts[last]);
    },
  );
}

/**
 * Nonces and the rows they guard in one statement: the rows of call i are inserted only if its
 * nonce was spent now; the numbers (1-based) of those calls come back.
 */
function spendAndInsertManyQuery(sample: readonly InsertRow[]): Prepared {
  return prepare(['n', 'ttl', ...sample.map((_, t) => `t${t}`)], (db, p) => {
    const ctes = [
      // Read once, numbered: the nonces to spend and, by number, whose rows to insert.
      sql`input as materialized (select * from json_populate_recordset(null::nonces, ${p.n}::json) with ordinality)`,
      sql`n as (${spendFrom(sql`input`, p.ttl)})`,
      sql`fresh as (select input.ordinality as i from input join n using (key_id, nonce))`,
      ...sample.map((r, t) => sql`${sql.raw(`w${t}`)} as (${insertFromJson(r, p[`t${t}`], true)})`),
    ];
    return compilable(db, sql`with ${sql.join(ctes)} select i from fresh`);
  });
}

/**
 * A statement the server rolled back because of the data it carried (SQLSTATE class 22, data
 * exception, or 23, integrity constraint): one item may be at fault, so the group's items are
 * retried one statement each. Any other failure (connection lost, timeout, read-only after a
 * failover, disk full) is not about an item: it fails the group as it is, without 64 retries
 * against a database that is already failing.
 */
const itemMayBeAtFault = (err: unknown): boolean => err instanceof pg.DatabaseError && /^2[23]/.test(err.code ?? '');

/** Values JSON carries exactly into the tables' columns (text, finite numbers, null). */
const isPlain = (v: unknown): boolean =>
  v === null || v === undefined || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));
const plainRows = (rows: readonly InsertRow[]): boolean =>
  rows.every((r) => Object.values(r.values).every(isPlain));

const nonceKey = (s: NonceSpend): string => `${s.keyId}\u0000${s.nonce}`;
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** Batches sharing nonces (a replay racing its original in another process) take the index's locks in one order. */
const byNonce = (a: NonceSpend, b: NonceSpend): number =>
  a.keyId === b.keyId ? cmp(a.nonce, b.nonce) : cmp(a.keyId, b.keyId);
const nonceRow = (s: NonceSpend) => ({ key_id: s.keyId, nonce: s.nonce, expires_at: s.now + s.ttlMs });

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

/**
 * Runs `write` over the items of a batch with distinct nonces, grouped by `groupKey` and sorted by
 * nonce; `write` says which of its items spent their nonce now. A nonce twice in one batch: only
 * its first use can be fresh, the later ones are replays of it. A group whose statement the database
 * refuses for its data is retried one item at a time, so only the item at fault gets the error; any
 * other failure fails that group alone.
 */
async function spendDistinct(
  spends: NonceSpend[],
  groupKey: (i: number) => unknown,
  write: (group: number[]) => Promise<boolean[]>,
): Promise<Array<Outcome<boolean>>> {
  const outcomes: Array<Outcome<boolean>> = spends.map(() => ({ ok: true, value: false }));
  const firstUse = new Map<string, number>();
  const distinct: number[] = [];
  const repeats: Array<[number, number]> = [];
  spends.forEach((s, i) => {
    const k = nonceKey(s);
    const first = firstUse.get(k);
    if (first === undefined) {
      firstUse.set(k, i);
      distinct.push(i);
    } else repeats.push([i, first]);
  });
  await Promise.all(
    groupBy(distinct, groupKey).map(async (group) => {
      group.sort((a, b) => byNonce(spends[a], spends[b]));
      try {
        const fresh = await write(group);
        group.forEach((i, k) => (outcomes[i] = { ok: true, value: fresh[k] }));
      } catch (err) {
        // Each group answers for itself: another group of the batch may still be committing, and
        // its callers must not hear an error for rows that are stored.
        if (group.length === 1 || !itemMayBeAtFault(err)) {
          for (const i of group) outcomes[i] = { ok: false, error: err };
          return;
        }
        await Promise.all(
          group.map(async (i) => {
            const alone = await settle(write([i]));
            outcomes[i] = alone.ok ? { ok: true, value: alone.value[0] } : alone;
          }),
        );
      }
    }),
  );
  // A repeat is a replay of its first use, unless that use failed: then nothing was spent, and
  // the repeat hears the same error rather than "reused".
  for (const [i, first] of repeats) if (!outcomes[first].ok) outcomes[i] = outcomes[first];
  return outcomes;
}

function groupBy<T>(items: T[], key: (t: T) => unknown): T[][] {
  const groups = new Map<unknown, T[]>();
  for (const it of items) {
    const k = key(it);
    const g = groups.get(k);
    if (g) g.push(it);
    else groups.set(k, [it]);
  }
  return [...groups.values()];
}

function settle<T>(p: Promise<T>): Promise<Outcome<T>> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}
