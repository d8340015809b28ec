/**
 * The signed write path's store helpers: queries compiled once and re-bound, pooled ids, and WAL
 * checkpoints in a worker thread (docs/decisions.md, "Signed writes: group commit").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { ID_PATTERNS } from '@vitals/protocol';
import { openDatabase, type DbHandle } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { prepare } from '../src/store/compiled.js';
import { newLogId, newMeasurementId, newRequestId, pooledHex } from '../src/ids.js';
import { waitFor } from '../src/testing.js';

const dirs: string[] = [];
const handles: DbHandle[] = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.close().catch(() => undefined);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function sqliteFile(opts: { backgroundCheckpoint?: boolean } = {}): Promise<{ h: DbHandle; file: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-hot-'));
  dirs.push(dir);
  const file = path.join(dir, 'vitals.db');
  const h = openDatabase({ sqlitePath: file, ...opts });
  handles.push(h);
  await migrateToLatest(h.db);
  return { h, file };
}

describe('prepare: compiled once, re-bound per call', () => {
  const insert = prepare(['keyId', 'nonce', 'expiresAt'], (db, p) =>
    db
      .insertInto('nonces')
      .values({ key_id: p.keyId, nonce: p.nonce, expires_at: p.expiresAt })
      .onConflict((oc) => oc.columns(['key_id', 'nonce']).doNothing()),
  );

  test('each call binds its own values in the right columns', async () => {
    const { h } = await sqliteFile();
    await insert.execute(h.db, { keyId: 'k1', nonce: 'n-one', expiresAt: 10 });
    await insert.execute(h.db, { nonce: 'n-two', expiresAt: 20, keyId: 'k2' });
    const dup = await insert.execute(h.db, { keyId: 'k1', nonce: 'n-one', expiresAt: 99 });
    expect(Number(dup.numAffectedRows)).toBe(0);
    const rows = await h.db.selectFrom('nonces').selectAll().orderBy('nonce').execute();
    expect(rows.map((r) => ({ ...r, expires_at: Number(r.expires_at) }))).toEqual([
      { key_id: 'k1', nonce: 'n-one', expires_at: 10 },
      { key_id: 'k2', nonce: 'n-two', expires_at: 20 },
    ]);
  });

  test('constants of the query stay as compiled', async () => {
    const { h } = await sqliteFile();
    const q = prepare(['nonce'], (db, p) =>
      db.insertInto('nonces').values({ key_id: 'fixed-key', nonce: p.nonce, expires_at: 7 }),
    );
    await q.execute(h.db, { nonce: 'a' });
    await q.execute(h.db, { nonce: 'b' });
    const rows = await h.db.selectFrom('nonces').select(['key_id', 'expires_at']).execute();
    expect(rows.map((r) => [r.key_id, Number(r.expires_at)])).toEqual([
      ['fixed-key', 7],
      ['fixed-key', 7],
    ]);
  });

  test('a name the query does not bind as a parameter is refused at first use', async () => {
    const { h } = await sqliteFile();
    const q = prepare(['nonce', 'unused'], (db, p) =>
      db.insertInto('nonces').values({ key_id: 'k', nonce: p.nonce, expires_at: 1 }),
    );
    await expect(q.execute(h.db, { nonce: 'x', unused: 1 })).rejects.toThrow(/does not bind unused/);
  });

  test('inside a write unit (a transaction) it runs on that transaction', async () => {
    const { h } = await sqliteFile();
    await expect(
      h.write(async (tx) => {
        await insert.execute(tx, { keyId: 'k', nonce: 'rolled-back', expiresAt: 1 });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await h.db.selectFrom('nonces').selectAll().execute()).toEqual([]);
  });
});

describe('group commit (SQLite)', () => {
  test('units of one turn share a transaction; a failing single-statement unit undoes only itself', async () => {
    const { h } = await sqliteFile();
    await h.db.insertInto('settings').values({ name: 'taken', value: 'x' }).execute();
    const put = (name: string) =>
      h.write((tx) => tx.insertInto('settings').values({ name, value: 'v' }).execute(), { single: true });
    const results = await Promise.allSettled([put('a'), put('taken'), put('b')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const names = (await h.db.selectFrom('settings').select('name').orderBy('name').execute()).map((r) => r.name);
    expect(names).toEqual(['a', 'b', 'taken']);
  });

  test('close waits for queued units to commit', async () => {
    const { h, file } = await sqliteFile();
    const pending = h.write((tx) => tx.insertInto('settings').values({ name: 'late', value: 'v' }).execute());
    await h.close();
    handles.splice(handles.indexOf(h), 1);
    await pending;
    const again = new SQLite(file, { readonly: true });
    try {
      expect(again.prepare('select value from settings where name = ?').get('late')).toEqual({ value: 'v' });
    } finally {
      again.close();
    }
  });
});

describe('pooled ids', () => {
  test('match the protocol formats and do not repeat across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const [r, l, m] = [newRequestId(), newLogId(), newMeasurementId()];
      expect(r).toMatch(/^req_[0-9a-f]{24}$/);
      expect(l).toMatch(ID_PATTERNS.log);
      expect(m).toMatch(ID_PATTERNS.measurement);
      for (const id of [r, l, m]) seen.add(id.slice(id.indexOf('_') + 1));
    }
    expect(seen.size).toBe(6000);
    expect(pooledHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });
});

describe('time-ordered log and measurement ids', () => {
  test('begin with the creation time in milliseconds, so later ids sort after earlier ones', async () => {
    const t0 = Date.now();
    const a = [newLogId(), newMeasurementId()];
    await new Promise((r) => setTimeout(r, 5));
    const b = [newLogId(), newMeasurementId()];
    for (let i = 0; i < 2; i++) {
      const prefixMs = (id: string): number => parseInt(id.slice(id.indexOf('_') + 1, id.indexOf('_') + 13), 16);
      expect(prefixMs(a[i])).toBeGreaterThanOrEqual(t0);
      expect(prefixMs(a[i])).toBeLessThanOrEqual(Date.now());
      expect(b[i] > a[i]).toBe(true);
    }
  });
});

describe('ids minted in one millisecond', () => {
  test('still sort in the order they were minted (successive usage-log rows share a timestamp)', () => {
    const logs = Array.from({ length: 500 }, () => newLogId());
    const meas = Array.from({ length: 500 }, () => newMeasurementId());
    for (const ids of [logs, meas]) {
      expect([...ids].sort()).toEqual(ids);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });
});

describe('background checkpoints (SQLite file)', () => {
  test('commits no longer checkpoint; the worker copies the WAL into the database file', async () => {
    const { h, file } = await sqliteFile({ backgroundCheckpoint: true });
    const before = fs.statSync(file).size;
    const big = 'x'.repeat(2000);
    for (let i = 0; i < 200; i++)
      await h.db
        .insertInto('settings')
        .values({ name: `s${i}`, value: big })
        .execute();
    // The worker runs a PASSIVE checkpoint every 250 ms; wait for the file to take the pages.
    await waitFor(() => fs.statSync(file).size > before, { timeoutMs: 5000, intervalMs: 50 }).catch(() => undefined);
    expect(fs.statSync(file).size).toBeGreaterThan(before + 200 * 2000);
    const other = new SQLite(file, { readonly: true });
    try {
      expect(other.prepare('select count(*) as n from settings').get()).toEqual({ n: 200 });
    } finally {
      other.close();
    }
  });

  test('without the option, SQLite checkpoints inside commits as usual', async () => {
    const { h } = await sqliteFile();
    const rows = await (
      await import('kysely')
    ).sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(h.db);
    expect(rows.rows[0].wal_autocheckpoint).toBe(1000);
  });

  test('close stops the worker and leaves a database another process can open', async () => {
    const { h, file } = await sqliteFile({ backgroundCheckpoint: true });
    await h.db.insertInto('settings').values({ name: 'a', value: 'b' }).execute();
    await h.close();
    handles.splice(handles.indexOf(h), 1);
    const again = new SQLite(file);
    try {
      expect(again.prepare('select value from settings where name = ?').get('a')).toEqual({ value: 'b' });
    } finally {
      again.close();
    }
  });
});
