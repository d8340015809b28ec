/**
 * Queries on the signed hot path, built with Kysely once per dialect and then only re-bound.
 * Kysely builds every query afresh (an operation-node tree, frozen, then compiled by a visitor);
 * for the three inserts of a signed `POST /sdk/v1/measurements` that was about as much CPU as
 * SQLite spent executing them (docs/benchmarks.md, API). The SQL text is still Kysely's for the
 * dialect in use, so SQLite and PostgreSQL run the same query (STYLE habit 4).
 *
 * The query is built with a distinct sentinel string in place of each named value; compiling it
 * shows which parameter position holds which name, and each call fills the positions from its own
 * values. A value that is not a sentinel (a constant of the query) stays as compiled.
 *
 * Each compiled text also gets a name (`preparedStatementName`): on PostgreSQL these statements run
 * as named prepared statements, so the server parses, analyses and plans each once per connection
 * instead of on every call (about a quarter of its CPU per signed write; db.ts).
 */
import type { CompiledQuery, Compilable, Kysely, QueryResult } from 'kysely';
import type { Database } from './schema.js';

const SENTINEL = '\u0000vitals-param:';

/** Text -> name of every statement compiled here; bounded by the queries in the code (and shapes in insert-all.ts). */
const statementNames = new Map<string, string>();

/** The prepared-statement name of a hot-path statement's SQL text, or undefined for any other query. */
export function preparedStatementName(sql: string): string | undefined {
  return statementNames.get(sql);
}

export interface PreparedQuery<P extends string, R> {
  execute(db: Kysely<Database>, values: Record<P, unknown>): Promise<QueryResult<R>>;
}

/**
 * @example
 * const spend = prepare(['keyId', 'nonce'], (db, p) => db.insertInto('nonces').values({ key_id: p.keyId, nonce: p.nonce, expires_at: 0 }));
 * await spend.execute(db, { keyId: 'key_1', nonce: 'abc' });
 */
export function prepare<P extends string, R = unknown>(
  names: readonly P[],
  build: (db: Kysely<Database>, p: Record<P, never>) => Compilable<R>,
): PreparedQuery<P, R> {
  // Per dialect adapter: a transaction shares its database's adapter, so it shares the entry too.
  const byAdapter = new WeakMap<object, { compiled: CompiledQuery<R>; slots: Array<P | { value: unknown }> }>();
  const sentinels = Object.fromEntries(names.map((n) => [n, `${SENTINEL}${n}`])) as Record<P, never>;
  const compile = (db: Kysely<Database>) => {
    const compiled = build(db, sentinels).compile();
    const seen = new Set<string>();
    const slots = compiled.parameters.map((v) => {
      if (typeof v === 'string' && v.startsWith(SENTINEL)) {
        const name = v.slice(SENTINEL.length) as P;
        seen.add(name);
        return name;
      }
      return { value: v };
    });
    const missing = names.filter((n) => !seen.has(n));
    // A value Kysely inlined or transformed (not bound as a parameter) cannot be re-bound.
    if (missing.length) throw new Error(`prepared query does not bind ${missing.join(', ')} as parameters`);
    if (!statementNames.has(compiled.sql)) statementNames.set(compiled.sql, `vitals_${statementNames.size + 1}`);
    return { compiled, slots };
  };
  return {
    async execute(db, values) {
      const adapter = db.getExecutor().adapter;
      let entry = byAdapter.get(adapter);
      if (!entry) {
        entry = compile(db);
        byAdapter.set(adapter, entry);
      }
      const parameters = entry.slots.map((s) => (typeof s === 'string' ? values[s] : s.value));
      return db.executeQuery<R>({ ...entry.compiled, parameters });
    },
  };
}
