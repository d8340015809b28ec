/**
 * The statements of PostgreSQL's group commit (pg-batch.ts). The rows travel as one JSON array per
 * table, expanded by `json_populate_recordset` with the table's own row type: the statement text is
 * the same for every batch size, so it is parsed and planned once per connection (compiled.ts names
 * it), and the column types come from the table.
 */
import { sql, type Compilable, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { prepare, type PreparedQuery } from './compiled.js';
import type { InsertRow } from './insert-all.js';

export type Prepared = PreparedQuery<string, unknown>;

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

export const spendMany = prepare(['n', 'ttl'], (db, p) =>
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
export function insertManyQuery(sample: readonly InsertRow[]): Prepared {
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
export function spendAndInsertManyQuery(sample: readonly InsertRow[]): Prepared {
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
