/**
 * The store's one connection point: SQLite (WAL) through better-sqlite3 by default, PostgreSQL
 * through pg when a URL is given. Both run the same Kysely queries (STYLE habit 4); this is the
 * only file that asks which one it is.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import {
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type DatabaseIntrospector,
  type PostgresDialectConfig,
  type PostgresPool,
  type PostgresPoolClient,
} from 'kysely';
import type { Database } from './schema.js';
import { startBackgroundCheckpoints } from './sqlite-checkpoint.js';
import { GroupCommit, type WriteUnit } from './group-commit.js';
import { insertAllInOneUnit, insertRows, type InsertRow } from './insert-all.js';
import { preparedStatementName } from './compiled.js';
import { spendNonce, type NonceSpend } from './nonces.js';
import { pgBatchedWrites } from './pg-batch.js';

// PostgreSQL returns int8/numeric as strings; our values are epoch ms and counters that fit a double.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export type Dialect = 'sqlite' | 'postgres';

export interface DbHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /**
   * Runs a unit of writes atomically: all of it is stored or none. The promise settles after the
   * commit. SQLite: units arriving together share one transaction, each in its own savepoint
   * (group-commit.ts); PostgreSQL: a transaction per unit, or with `single` (a unit of one
   * statement, or of statements each safe alone) no transaction: BEGIN and COMMIT would be two
   * more round trips. The unit must use only the `tx` given.
   */
  write<T>(unit: WriteUnit<T>, opts?: { single?: boolean }): Promise<T>;
  /**
   * Spends a nonce (nonces.ts): false when it was already spent and has not expired. Settles after
   * the commit. SQLite: a single unit of the group commit; PostgreSQL: calls arriving together share
   * one multi-row statement (pg-batch.ts).
   */
  spendNonce(spend: NonceSpend): Promise<boolean>;
  /**
   * Inserts rows into several tables, all or none. SQLite: one unit of the group commit (insert-all.ts);
   * PostgreSQL: one statement, shared by the calls arriving together (pg-batch.ts).
   */
  insertAll(rows: readonly InsertRow[]): Promise<void>;
  /**
   * Spends a nonce and inserts the rows it guards, in one atomic write: true when both are stored;
   * false when the nonce was already spent (and has not expired), and then nothing is stored. When
   * it throws, nothing is stored and the nonce is not spent. SQLite: one unit of the group commit;
   * PostgreSQL: one statement, shared by the calls arriving together (pg-batch.ts).
   */
  spendNonceAndInsert(spend: NonceSpend, rows: readonly InsertRow[]): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** SQLite file path (`:memory:` allowed) when no URL is given. */
  sqlitePath?: string;
  databaseUrl?: string;
  /** PostgreSQL schema to use (tests isolate themselves in their own schema). */
  pgSchema?: string;
  poolSize?: number;
  /** SQLite file only: WAL checkpoints in a worker thread instead of inside commits (sqlite-checkpoint.ts). */
  backgroundCheckpoint?: boolean;
}

export function openDatabase(opts: OpenOptions): DbHandle {
  if (opts.databaseUrl) {
    const schema = opts.pgSchema?.replace(/[^a-z0-9_]/gi, '');
    // The search path is a connection startup option, so no query can run before it applies.
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolSize ?? 10,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    // An idle pooled connection can be closed under us (database restart or failover, an
    // administrator's pg_terminate_backend, a network drop). pg reports that as an 'error' event on
    // the pool, which crashes the process when nobody listens; the pool has already discarded the
    // client and opens a new one on the next query, so a warning is all it takes.
    pool.on('error', (err) => process.emitWarning(`PostgreSQL connection lost; the pool reconnects (${err.message})`));
    const named = withNamedStatements(pool);
    const dialect = schema ? new SchemaScopedPostgresDialect({ pool: named }, schema) : new PostgresDialect({ pool: named });
    const db = new Kysely<Database>({ dialect });
    const batched = pgBatchedWrites(db);
    return {
      db,
      dialect: 'postgres',
      write: (unit, o) => (o?.single ? unit(db) : db.transaction().execute(unit)),
      spendNonce: batched.spendNonce,
      insertAll: batched.insertAll,
      spendNonceAndInsert: batched.spendNonceAndInsert,
      close: async () => {
        await batched.drain();
        await db.destroy();
      },
    };
  }
  const file = opts.sqlitePath ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const checkpointer =
    opts.backgroundCheckpoint && file !== ':memory:' ? startBackgroundCheckpoints(sqlite, file) : undefined;
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  const group = new GroupCommit(db);
  return {
    db,
    dialect: 'sqlite',
    write: (unit, o) => group.run(unit, o?.single),
    spendNonce: (s) => group.run((tx) => spendNonce(tx, s.keyId, s.nonce, s.now, s.ttlMs), true),
    insertAll: insertAllInOneUnit((unit) => group.run(unit)),
    spendNonceAndInsert: (s, rows) =>
      group.run(async (tx) => {
        if (!(await spendNonce(tx, s.keyId, s.nonce, s.now, s.ttlMs))) return false;
        await insertRows(tx, rows);
        return true;
      }),
    close: async () => {
      await group.drain();
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/**
 * Kysely prepares every query afresh, and preparing is about a quarter of a signed call's cost on
 * SQLite (docs/benchmarks.md, API). better-sqlite3 statements are reusable and Kysely runs them
 * synchronously one at a time, so the same SQL text can share one prepared statement. The cache is
 * bounded (queries with `in (...)` lists of varying length produce many texts).
 */
function withStatementCache(sqlite: SQLite.Database, max = 256): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (sql: string): SQLite.Statement => {
    let stmt = cache.get(sql);
    if (stmt) {
      cache.delete(sql);
      cache.set(sql, stmt); // most recently used last
      return stmt;
    }
    stmt = sqlite.prepare(sql);
    cache.set(sql, stmt);
    if (cache.size > max) cache.delete(cache.keys().next().value as string);
    return stmt;
  };
  return new Proxy(sqlite, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * The pool as Kysely sees it, with the hot-path statements (compiled.ts) sent as named prepared
 * statements: pg parses each once per connection and then sends only Bind/Execute, and the server
 * keeps its plan. Parse, analysis and planning were about a quarter of PostgreSQL's CPU per signed
 * write (docs/benchmarks.md, API). Every other query goes as before (unnamed, planned per call), so
 * queries with varying text never pile up prepared statements on a connection.
 */
function withNamedStatements(pool: pg.Pool): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let w = wrapped.get(client);
    if (!w) {
      const query = ((q: unknown, values?: unknown[]) => {
        const name = typeof q === 'string' ? preparedStatementName(q) : undefined;
        if (name) return client.query({ name, text: q as string, values });
        return client.query(q as never, values as never);
      }) as unknown as PostgresPoolClient['query'];
      w = { query, release: () => client.release() };
      wrapped.set(client, w);
    }
    return w;
  };
  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}

/**
 * Kysely's introspector lists the tables of every schema, and its Migrator decides whether its own
 * tables exist by name alone: in a schema of its own (tests, several deployments in one database)
 * it would see another schema's `kysely_migration_lock` and never create its own. This dialect
 * shows the introspector only the schema in use.
 */
class SchemaScopedPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly schema: string,
  ) {
    super(config);
  }

  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    const inner = super.createIntrospector(db);
    const schema = this.schema;
    return {
      getSchemas: () => inner.getSchemas(),
      getTables: async (o) => (await inner.getTables(o)).filter((t) => t.schema === schema),
      getMetadata: async (o) => ({ tables: (await inner.getMetadata(o)).tables.filter((t) => t.schema === schema) }),
    };
  }
}
