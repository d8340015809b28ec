/**
 * PostgreSQL only: the store's limits (store/pg-pool.ts) are applied on a real server, and what a
 * real server answers when they bite is classified as unavailable (store/unavailable.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openDatabase, type DbHandle, type OpenOptions } from '../src/store/db.js';
import { unavailableReason } from '../src/store/unavailable.js';

const PG_URL = process.env.VITALS_TEST_DATABASE_URL;

describe.skipIf(!PG_URL)('PostgreSQL limits', () => {
  const handles: DbHandle[] = [];
  const open = (o: Omit<OpenOptions, 'databaseUrl'> = {}): DbHandle => {
    const h = openDatabase({ databaseUrl: PG_URL!, ...o });
    handles.push(h);
    return h;
  };
  afterEach(async () => {
    for (const h of handles.splice(0)) await h.close();
  });

  const show = async (h: DbHandle): Promise<string> =>
    (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(h.db)).rows[0].statement_timeout;

  it('statement_timeout is set on every pooled connection: the default 30 s, or the configured value', async () => {
    expect(await show(open())).toBe('30s');
    const h = open({ statementTimeoutMs: 1234, poolSize: 3 });
    // Three connections at once, so more than one is opened.
    const held = await Promise.all(
      [0, 1, 2].map(() =>
        sql<{
          t: string;
          pid: number;
        }>`select current_setting('statement_timeout') as t, pg_backend_pid() as pid, pg_sleep(0.05)`.execute(h.db),
      ),
    );
    expect(new Set(held.map((r) => r.rows[0].pid)).size).toBe(3);
    for (const r of held) expect(r.rows[0].t).toBe('1234ms');
  });

  it('a statement longer than the timeout fails with 57014, classified unavailable; the connection stays usable', async () => {
    const h = open({ statementTimeoutMs: 100, poolSize: 1 });
    const started = Date.now();
    const err = (await sql`select pg_sleep(3)`.execute(h.db).catch((e: unknown) => e)) as { code?: string };
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err.code).toBe('57014');
    expect(unavailableReason(err)).toBe('57014');
    expect((await sql<{ one: number }>`select 1 as one`.execute(h.db)).rows[0].one).toBe(1);
  });

  it('waiting for a pooled connection ends after the connect timeout ("timeout exceeded when trying to connect")', async () => {
    const h = open({ connectTimeoutMs: 200, poolSize: 1 });
    const err = await h.db.connection().execute(async () => {
      // The pool's only connection is held here; another query must wait for it.
      const started = Date.now();
      const e = await sql`select 1`.execute(h.db).catch((x: unknown) => x);
      expect(Date.now() - started).toBeLessThan(1500);
      return e;
    });
    expect(unavailableReason(err)).toBe('connect_timeout');
  });

  it('a backend terminated mid-statement (restart, failover, pg_terminate_backend): classified unavailable, the process survives, the connection is replaced', async () => {
    const h = open({ poolSize: 1 });
    const admin = open({ poolSize: 1 });
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(h.db)).rows[0].pid;
    const sleeping = sql`select pg_sleep(5)`.execute(h.db).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    await sql`select pg_terminate_backend(${pid})`.execute(admin.db);
    const err = await sleeping;
    expect(unavailableReason(err)).toMatch(/^(57P01|connection_terminated)$/);
    // The pool replaces the connection rather than handing out the dead one again (whose socket
    // then ends while checked out: an 'error' event with no pg-pool listener, fatal before).
    await new Promise((r) => setTimeout(r, 100));
    const again = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(h.db);
    expect(again.rows[0].pid).not.toBe(pid);
  });

  it('unlimited (migrations): a connection of its own without statement_timeout', async () => {
    const h = open({ statementTimeoutMs: 100 });
    const inside = await h.unlimited(async (db) => {
      await sql`select pg_sleep(0.3)`.execute(db);
      return (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db)).rows[0].statement_timeout;
    });
    expect(inside).toBe('0');
    expect(await show(h)).toBe('100ms');
  });
});
