/**
 * Rows for several tables stored together or not at all (a stored measurement and its usage-log
 * row). PostgreSQL: one statement, the first rows inserted by data-modifying WITH clauses, so one
 * round trip and one commit instead of BEGIN, an insert per row and COMMIT (each a round trip to
 * the server). SQLite: one unit of the group commit. Either way the statement is built by Kysely
 * once per shape (tables and columns) and re-bound (compiled.ts).
 */
import type { Insertable, Kysely } from 'kysely';
import type { Database } from './schema.js';
import { prepare, type PreparedQuery } from './compiled.js';
import type { WriteUnit } from './group-commit.js';

export type InsertRow = {
  [T in keyof Database]: { table: T; values: Insertable<Database[T]> };
}[keyof Database];

type Prepared = PreparedQuery<string, unknown>;

const slot = (i: number, column: string): string => `${i}.${column}`;

/** Tables and columns of a set of rows (statements are compiled once per shape). */
export function shapeOf(rows: readonly InsertRow[]): string {
  return rows.map((r) => `${r.table}(${Object.keys(r.values).join(',')})`).join(';');
}

function bind(rows: readonly InsertRow[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  rows.forEach((r, i) => {
    for (const [c, v] of Object.entries(r.values)) values[slot(i, c)] = v;
  });
  return values;
}

function valuesOf(row: InsertRow, i: number, p: Record<string, never>): Record<string, never> {
  return Object.fromEntries(Object.keys(row.values).map((c) => [c, p[slot(i, c)]]));
}

/** PostgreSQL: `with w0 as (insert ...), w1 as (insert ...) insert ...`, one statement. */
export function insertAllInOneStatement(db: Kysely<Database>): (rows: readonly InsertRow[]) => Promise<void> {
  const cache = new Map<string, Prepared>();
  return async (rows) => {
    const shape = shapeOf(rows);
    let q = cache.get(shape);
    if (!q) {
      const names = rows.flatMap((r, i) => Object.keys(r.values).map((c) => slot(i, c)));
      q = prepare(names, (d, p) => {
        // The table names vary with the shape, which Kysely's types cannot follow through `with`.
        let creator = d as unknown as Kysely<any>;
        rows.slice(0, -1).forEach((r, i) => {
          creator = creator.with(`w${i}`, (w) =>
            w.insertInto(r.table).values(valuesOf(r, i, p)),
          ) as unknown as Kysely<any>;
        });
        const last = rows.length - 1;
        return creator.insertInto(rows[last].table).values(valuesOf(rows[last], last, p));
      });
      cache.set(shape, q);
    }
    await q.execute(db, bind(rows));
  };
}

/** Row-by-row inserts, compiled once per table and columns. */
const singleRowQueries = new Map<string, Prepared>();

/** Inserts the rows one statement each on the handle given (a write unit's `tx`). */
export async function insertRows(tx: Kysely<Database>, rows: readonly InsertRow[]): Promise<void> {
  for (const row of rows) {
    const shape = shapeOf([row]);
    let q = singleRowQueries.get(shape);
    if (!q) {
      q = prepare(
        Object.keys(row.values).map((c) => slot(0, c)),
        (d, p) => d.insertInto(row.table).values(valuesOf(row, 0, p)),
      );
      singleRowQueries.set(shape, q);
    }
    await q.execute(tx, bind([row]));
  }
}

/** SQLite: one insert per row, all inside one write unit. */
export function insertAllInOneUnit(
  write: (unit: WriteUnit<void>) => Promise<void>,
): (rows: readonly InsertRow[]) => Promise<void> {
  return (rows) => write((tx) => insertRows(tx, rows));
}
