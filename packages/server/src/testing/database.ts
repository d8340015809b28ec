/**
 * A whole PostgreSQL database of its own for one test world (part of the test harness, ../testing.ts):
 * batch worlds need one rather than a schema, because the migrator's table checks look across
 * schemas and pg-boss brings its own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { randomHex } from '@vitals/protocol';
import { openDatabase, type DbHandle, type OpenOptions } from '../store/db.js';

export async function openWholeTestDatabase(
  url: string,
  limits: Pick<OpenOptions, 'connectTimeoutMs' | 'statementTimeoutMs' | 'maxQueuedWrites'> = {},
): Promise<{ db: DbHandle; dataDir: string; url: string; cleanup(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-batch-'));
  const name = `vb_${randomHex(6)}`;
  const admin = openDatabase({ databaseUrl: url, poolSize: 1 });
  await sql`create database ${sql.id(name)}`.execute(admin.db);
  await admin.close();
  const u = new URL(url);
  u.pathname = `/${name}`;
  const scoped = u.toString();
  const db = openDatabase({ databaseUrl: scoped, poolSize: 8, ...limits });
  return {
    db,
    dataDir,
    url: scoped,
    async cleanup() {
      await db.close().catch(() => undefined);
      const a = openDatabase({ databaseUrl: url, poolSize: 1 });
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(a.db);
      await a.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
