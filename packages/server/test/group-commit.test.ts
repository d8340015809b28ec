/**
 * The embedded store's group commit (store/group-commit.ts). It is bounded: while a commit stalls,
 * the units behind it hold requests; past `maxQueued` unsettled units beyond one batch a new write
 * is refused at once with StoreBusyError (answered 503), and everything accepted still commits once
 * the stall ends. And what each caller hears matches what is stored, also when a unit's failure
 * makes SQLite roll the whole transaction back (a real SQLITE_FULL).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterEach, describe, expect, test } from 'vitest';
import { GroupCommit, MAX_BATCH } from '../src/store/group-commit.js';
import type { Database } from '../src/store/schema.js';
import { StoreBusyError, isStoreUnavailable } from '../src/store/unavailable.js';

let db: Kysely<Database> | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

function open(): Kysely<Database> {
  db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
  return db;
}

describe('SQLite group commit bound', () => {
  test('past maxQueued unsettled writes a new one is refused at once; the accepted ones all commit', async () => {
    const k = open();
    await sql`create table t (v integer)`.execute(k);
    const maxQueued = 5;
    const group = new GroupCommit(k, maxQueued);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // The first write stalls inside its transaction (a disk that does not answer).
    const accepted: Promise<number>[] = [
      group.run(async (tx) => {
        await gate;
        await sql`insert into t values (0)`.execute(tx);
        return 0;
      }),
    ];
    await new Promise((r) => setImmediate(r)); // the first batch has started and holds the writer
    for (let i = 1; i < maxQueued + MAX_BATCH; i++) {
      accepted.push(group.run(async (tx) => (await sql`insert into t values (${i})`.execute(tx), i)));
      if (i % 20 === 0) await new Promise((r) => setImmediate(r)); // later batches start and wait
    }
    const refused = group.run(async () => -1);
    await expect(refused).rejects.toBeInstanceOf(StoreBusyError);
    expect(isStoreUnavailable(await refused.catch((e: unknown) => e))).toBe(true);

    release();
    const values = await Promise.all(accepted);
    expect(values).toEqual(Array.from({ length: maxQueued + MAX_BATCH }, (_, i) => i));
    const rows = await sql<{ n: number }>`select count(*) as n from t`.execute(k);
    expect(rows.rows[0].n).toBe(maxQueued + MAX_BATCH);
    // Once the stall is over, writes are accepted again.
    await expect(group.run(async () => 7)).resolves.toBe(7);
  });

  test('a failed unit frees its place in the bound', async () => {
    const group = new GroupCommit(open(), 1);
    for (let i = 0; i < 3 * (1 + MAX_BATCH); i++) {
      await expect(group.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    }
    await expect(group.run(async () => 1)).resolves.toBe(1);
  });
});

describe('SQLite group commit when a unit takes the transaction down', () => {
  test('disk full in one unit: no caller is told of a failure for a write that is stored, nor of success for one that is not', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-gc-full-'));
    const raw = new SQLite(path.join(dir, 'full.db'));
    raw.pragma('journal_mode = WAL');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) });
    try {
      await sql`create table t (v integer, b blob)`.execute(db);
      // A real SQLITE_FULL: the file may grow by three pages, and unit 2 needs far more.
      raw.pragma(`max_page_count = ${(raw.pragma('page_count', { simple: true }) as number) + 3}`);
      const group = new GroupCommit(db, 100, () => raw.inTransaction);
      const insert = (v: number, bytes: number) => (tx: Kysely<Database>) =>
        sql`insert into t values (${v}, zeroblob(${bytes}))`.execute(tx).then(() => v);
      const outcomes = await Promise.allSettled([
        group.run(insert(1, 10), true),
        group.run(insert(2, 1_000_000), true),
        group.run(insert(3, 10), true),
        group.run(insert(4, 10)),
      ]);
      const stored = new Set((raw.prepare('select v from t').all() as { v: number }[]).map((r) => r.v));
      outcomes.forEach((o, i) => expect(o.status === 'fulfilled').toBe(stored.has(i + 1)));
      expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_FULL' });
      // The group commit goes on once there is room again.
      raw.pragma('max_page_count = 1073741823');
      await expect(group.run(insert(5, 10))).resolves.toBe(5);
      expect(raw.prepare('select count(*) as n from t where v = 5').get()).toEqual({ n: 1 });
    } finally {
      await db.destroy();
      db = undefined;
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
