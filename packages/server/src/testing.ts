/**
 * Test support: a real server on a free loopback port with its own database (SQLite in a temp
 * dir, or a fresh PostgreSQL schema when VITALS_TEST_DATABASE_URL is set), and key factories.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { randomHex } from '@vitals/protocol';
import { loadConfig, type Config } from './config.js';
import { ManualClock, systemClock, type Clock } from './clock.js';
import { openDatabase, type DbHandle, type OpenOptions } from './store/db.js';
import { createContext, closeContext, storeLimits } from './deps.js';
import type { AppContext } from './context.js';
import type { BuildOptions } from './app.js';
import { createOrg, createKey, microFromUsd, type CreateKeyInput } from './store/orgs-keys.js';
import { buildServer } from './server.js';

export { ManualClock };

export interface TestKeyOptions {
  orgId?: string;
  rateLimitPerMin?: number;
  quotaSecondsMonth?: number;
  tokenQuotaMonthUsd?: number;
  /** The organization's balance (default $100); null: unmetered (CLARIFICATIONS 28). */
  tokenBalanceUsd?: number | null;
  expiresAt?: number;
  status?: 'active' | 'disabled';
  features?: string[];
}

export interface TestKey {
  keyId: string;
  secret: string;
  orgId: string;
}

/**
 * A database of its own for one test file: SQLite in a temp dir, or a new PostgreSQL schema.
 * `limits`: the store's PostgreSQL limits (defaults otherwise).
 */
export async function openTestDatabase(
  limits: Pick<OpenOptions, 'connectTimeoutMs' | 'statementTimeoutMs' | 'maxQueuedWrites'> = {},
): Promise<{ db: DbHandle; dataDir: string; cleanup(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-test-'));
  const url = process.env.VITALS_TEST_DATABASE_URL;
  if (url) {
    const schema = `t_${randomHex(6)}`;
    const admin = openDatabase({ databaseUrl: url, poolSize: 1 });
    await admin.db.schema.createSchema(schema).execute();
    await admin.close();
    const db = openDatabase({ databaseUrl: url, pgSchema: schema, poolSize: 5, ...limits });
    return {
      db,
      dataDir,
      async cleanup() {
        // closeContext may have closed it already; a second close throws, and must not skip the drop.
        await db.close().catch(() => undefined);
        const a = openDatabase({ databaseUrl: url, poolSize: 1 });
        await a.db.schema.dropSchema(schema).cascade().execute();
        await a.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const db = openDatabase({ sqlitePath: path.join(dataDir, 'vitals.db') });
  return {
    db,
    dataDir,
    async cleanup() {
      await db.close().catch(() => undefined);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function makeKey(ctx: AppContext, opts: TestKeyOptions = {}): Promise<TestKey> {
  const now = ctx.clock.now();
  const orgId =
    opts.orgId ??
    (
      await createOrg(
        ctx.db.db,
        `test-${randomHex(3)}`,
        opts.tokenBalanceUsd === undefined ? 100 : opts.tokenBalanceUsd,
        now,
      )
    ).id;
  const input: CreateKeyInput = {
    orgId,
    rateLimitPerMin: opts.rateLimitPerMin,
    quotaSecondsMonth: opts.quotaSecondsMonth ?? null,
    tokenQuotaMonthMicro: opts.tokenQuotaMonthUsd === undefined ? null : microFromUsd(opts.tokenQuotaMonthUsd),
    expiresAt: opts.expiresAt ?? null,
    status: opts.status,
    features: opts.features,
  };
  const { key, secret } = await createKey(ctx.db.db, input, now);
  return { keyId: key.id, secret, orgId };
}

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  clock: Clock;
  config: Config;
  createKey(opts?: TestKeyOptions): Promise<TestKey>;
  close(): Promise<void>;
}

/**
 * An app for `inject` tests, with an injected clock (a ManualClock unless one is given). The store's
 * limits come from `env` (VITALS_DB_*), as a deployment's do; `logger` as for buildApp.
 */
export async function createTestApp(
  opts: { clock?: Clock; env?: Record<string, string>; logger?: BuildOptions['logger'] } = {},
): Promise<TestApp> {
  const store = await openTestDatabase(storeLimits(loadConfig({ ...opts.env })));
  const config = loadConfig({ ...opts.env, VITALS_DATA_DIR: store.dataDir });
  const clock = opts.clock ?? new ManualClock(Date.now());
  const ctx = await createContext(config, { clock, db: store.db });
  const { app } = await buildServer(ctx, { logger: opts.logger });
  return {
    app,
    ctx,
    clock,
    config,
    createKey: (o) => makeKey(ctx, o),
    async close() {
      await app.close();
      await closeContext(ctx).catch(() => undefined);
      await store.cleanup().catch(() => undefined);
    },
  };
}

export interface TestServer extends TestApp {
  baseUrl: string;
}

/** A real listening server on 127.0.0.1 with the system clock (for SDK, CLI and socket tests). */
export async function startTestServer(opts: { env?: Record<string, string>; clock?: Clock } = {}): Promise<TestServer> {
  const t = await createTestApp({ clock: opts.clock ?? systemClock, env: opts.env });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const addr = t.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const baseUrl = `http://127.0.0.1:${port}`;
  t.ctx.publicUrl = t.config.publicUrl ?? baseUrl;
  return { ...t, baseUrl };
}

/**
 * Makes the test app's store refuse writes for real, as a saturated or stalled database does: another
 * connection holds the write lock, and the app gives up waiting for it quickly. SQLite: a second
 * connection in `BEGIN IMMEDIATE`, the app's busy_timeout lowered to `sqliteBusyMs` (SQLITE_BUSY);
 * PostgreSQL: the nonces table (or `pgTable`) locked by a transaction on one of the app's own connections, so the
 * app's writes run into its statement_timeout (57014; give the app a short
 * VITALS_DB_STATEMENT_TIMEOUT_MS). Reads of other tables still work. Returns the release.
 */
export async function holdStoreWriteLock(
  t: TestApp,
  opts: { sqliteBusyMs?: number; pgTable?: 'nonces' | 'cloud_jobs' } = {},
): Promise<() => Promise<void>> {
  const db = t.ctx.db;
  if (db.dialect === 'sqlite') {
    const holder = new SQLite(path.join(t.config.dataDir, 'vitals.db'));
    holder.exec('BEGIN IMMEDIATE');
    await sql`pragma busy_timeout = ${sql.raw(String(opts.sqliteBusyMs ?? 50))}`.execute(db.db);
    return async () => {
      await sql`pragma busy_timeout = 5000`.execute(db.db);
      holder.exec('ROLLBACK');
      holder.close();
    };
  }
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holding = db.db.transaction().execute(async (tx) => {
    await sql`lock table ${sql.table(opts.pgTable ?? 'nonces')} in access exclusive mode`.execute(tx);
    locked();
    await released;
  });
  await Promise.race([isLocked, holding]);
  return async () => {
    release();
    await holding;
  };
}
