/**
 * The store's one connection point: SQLite (WAL) through better-sqlite3 by default, PostgreSQL
 * through pg when a URL is given. Both run the same Kysely queries (STYLE habit 4); this is the
 * only file that asks which one it is.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { Database } from './schema.js';

// PostgreSQL returns int8/numeric as strings; our values are epoch ms and counters that fit a double.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export type Dialect = 'sqlite' | 'postgres';

export interface DbHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** SQLite file path (`:memory:` allowed) when no URL is given. */
  sqlitePath?: string;
  databaseUrl?: string;
  /** PostgreSQL schema to use (tests isolate themselves in their own schema). */
  pgSchema?: string;
  poolSize?: number;
}

export function openDatabase(opts: OpenOptions): DbHandle {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
    if (opts.pgSchema) {
      const schema = opts.pgSchema.replace(/[^a-z0-9_]/gi, '');
      pool.on('connect', (client) => {
        client.query(`SET search_path TO "${schema}"`).catch(() => undefined);
      });
    }
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  const file = opts.sqlitePath ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}
