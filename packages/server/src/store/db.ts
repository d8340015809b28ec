/**
 * The store's one connection point: SQLite (WAL) through better-sqlite3 by default, PostgreSQL
 * through pg when a URL is given. Both run the same Kysely queries (STYLE habit 4); this is the
 * only file that asks which one it is.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from './schema.js';
import { startBackgroundCheckpoints } from './sqlite-checkpoint.js';
import { GroupCommit, type WriteUnit } from './group-commit.js';
import { insertAllInOneUnit, insertRows, type InsertRow } from './insert-all.js';
import { spendNonce, type NonceSpend } from './nonces.js';
import { pgBatchedWrites } from './pg-batch.js';
import { openPgKysely } from './pg-pool.js';
import { DB_LIMIT_DEFAULTS } from '../config.js';

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
  /**
   * Runs `fn` (the migrations) without the statement limits: PostgreSQL, on a connection of its
   * own, opened for it and closed after, with no statement_timeout (an index build on a large table
   * may rightly take minutes); SQLite, on the handle itself (it has no statement limit).
   */
  unlimited<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** SQLite file path (`:memory:` allowed) when no URL is given. */
  sqlitePath?: string;
  databaseUrl?: string;
  /** PostgreSQL schema to use (tests isolate themselves in their own schema). */
  pgSchema?: string;
  poolSize?: number;
  /** PostgreSQL: longest wait for a connection, pooled or new, in ms (pg-pool.ts). Default 5000. */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: `statement_timeout` of every connection in ms, and pg's `query_timeout` 1 s above it
   * (pg-pool.ts); 0: none. Default 30000.
   */
  statementTimeoutMs?: number;
  /**
   * Writes that may wait for a group commit; more are refused at once (StoreBusyError → 503).
   * PostgreSQL counts per batched kind, and also refuses one that waited `connectTimeoutMs`
   * (batcher.ts); SQLite counts every queued write unit (group-commit.ts). Default 4096.
   */
  maxQueuedWrites?: number;
  /** SQLite file only: WAL checkpoints in a worker thread instead of inside commits (sqlite-checkpoint.ts). */
  backgroundCheckpoint?: boolean;
}

export function openDatabase(opts: OpenOptions): DbHandle {
  if (opts.databaseUrl) {
    const pgOpts = {
      url: opts.databaseUrl,
      schema: opts.pgSchema,
      poolSize: opts.poolSize ?? 10,
      connectTimeoutMs: opts.connectTimeoutMs ?? DB_LIMIT_DEFAULTS.connectTimeoutMs,
      statementTimeoutMs: opts.statementTimeoutMs ?? DB_LIMIT_DEFAULTS.statementTimeoutMs,
    };
    const db = openPgKysely(pgOpts);
    // A write waits for a batch slot at most as long as a query waits for a pooled connection.
    const batched = pgBatchedWrites(db, {
      maxQueued: opts.maxQueuedWrites ?? DB_LIMIT_DEFAULTS.maxQueuedWrites,
      maxWaitMs: pgOpts.connectTimeoutMs,
    });
    return {
      db,
      dialect: 'postgres',
      write: (unit, o) => (o?.single ? unit(db) : db.transaction().execute(unit)),
      spendNonce: batched.spendNonce,
      insertAll: batched.insertAll,
      spendNonceAndInsert: batched.spendNonceAndInsert,
      unlimited: async (fn) => {
        const own = openPgKysely({ ...pgOpts, poolSize: 1, statementTimeoutMs: 0 });
        try {
          return await fn(own);
        } finally {
          await own.destroy();
        }
      },
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
  const group = new GroupCommit(
    db,
    opts.maxQueuedWrites ?? DB_LIMIT_DEFAULTS.maxQueuedWrites,
    () => sqlite.inTransaction,
  );
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
    unlimited: (fn) => fn(db),
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
