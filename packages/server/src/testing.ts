/**
 * The test harness: `createWorld` gives a test its own app and database (SQLite in a temp dir, or
 * a fresh PostgreSQL schema, or a whole database for batch worlds, when VITALS_TEST_DATABASE_URL is
 * set), its own key and an injected clock, optionally listening on loopback or with batch settings;
 * plus key factories, signed requests, a real store outage, and `waitFor`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
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
import type { BatchConfig, BatchRuntime } from './batch/index.js';
import { openWholeTestDatabase } from './testing/database.js';
import { signedInject, type SignedInjectOptions } from './testing/sign.js';

export { signedInject, type Body, type SignedInjectOptions } from './testing/sign.js';
export { waitFor } from './testing/wait-for.js';
export { openWholeTestDatabase } from './testing/database.js';

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

/** What a world is made of (every option has a default; see `createWorld`). */
export interface WorldOptions {
  /** The app's clock: a ManualClock at `now` (default: the current time) unless one is given. */
  clock?: Clock;
  now?: number;
  /** Configuration as a deployment's environment (VITALS_*); the store's limits come from it too. */
  env?: Record<string, string>;
  logger?: BuildOptions['logger'];
  /** The world's own key (its own organization unless `orgId` says otherwise). */
  keyOptions?: TestKeyOptions;
  /**
   * A batch world: these batch settings over quick test defaults (poll every 50 ms, no periodic
   * sweep, no webhook backoff, no embedded worker), no face models (emotion and gaze "not
   * available"), none read from the process environment, and on PostgreSQL a whole database.
   */
  batch?: Partial<BatchConfig>;
  /** With `batch` on PostgreSQL: configure VITALS_DATABASE_URL too, so the queue is pg-boss (scale-out mode). */
  pgQueue?: boolean;
  /** Listen on a free loopback port (SDK, CLI and socket tests); `baseUrl` is then its address. */
  listen?: boolean;
}

/**
 * The test harness (STYLE habit 10): every test owns its world: its own app and database, its own
 * organization and key, and a clock it moves by hand. One implementation for `inject` tests, batch
 * tests and tests over a real socket (`listen`).
 */
export interface World<C extends Clock = ManualClock> {
  app: FastifyInstance;
  ctx: AppContext;
  clock: C;
  config: Config;
  /** The batch runtime (ctx.batch). */
  rt: BatchRuntime;
  key: TestKey;
  dataDir: string;
  /** The PostgreSQL URL of this world's own database, for a batch world on PostgreSQL. */
  databaseUrl?: string;
  /** The listening address, with `listen`. */
  baseUrl?: string;
  /** The world itself (older tests reach the app through `world.t`). */
  t: World<C>;
  /** Signed request (NCS1) by the world's key or `key`, timestamped by the world's clock. */
  call(opts: SignedInjectOptions & { key?: TestKey }): Promise<LightMyRequestResponse>;
  newKey(opts?: TestKeyOptions): Promise<TestKey>;
  createKey(opts?: TestKeyOptions): Promise<TestKey>;
  /** Usage rows of a key straight from the store (for keys nobody can sign for). */
  usageRows(keyId: string | null): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

export async function createWorld<C extends Clock = ManualClock>(
  opts: WorldOptions & { clock?: C } = {},
): Promise<World<C>> {
  const limits = storeLimits(loadConfig({ ...opts.env }));
  const pgUrl = process.env.VITALS_TEST_DATABASE_URL;
  const store =
    opts.batch && pgUrl
      ? await openWholeTestDatabase(pgUrl, limits)
      : { ...(await openTestDatabase(limits)), url: undefined };
  const config = loadConfig({
    ...opts.env,
    VITALS_DATA_DIR: store.dataDir,
    ...(opts.batch && opts.pgQueue && store.url ? { VITALS_DATABASE_URL: store.url } : {}),
  });
  const clock = (opts.clock ?? new ManualClock(opts.now ?? Date.now())) as C;
  const ctx = await createContext(config, {
    clock,
    db: store.db,
    ...(opts.batch && {
      env: {},
      batch: { pollMs: 50, sweepMs: 3_600_000, webhookRetryBaseMs: 0, embeddedWorker: false, ...opts.batch },
    }),
  });
  if (opts.batch) ctx.batch!.auxCapabilities = async () => ({ emotion: false, gaze: false });
  const { app } = await buildServer(ctx, { logger: opts.logger });
  let baseUrl: string | undefined;
  if (opts.listen) {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    baseUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    ctx.publicUrl = config.publicUrl ?? baseUrl;
  }
  const key = await makeKey(ctx, opts.keyOptions);
  const world: World<C> = {
    app,
    ctx,
    clock,
    config,
    rt: ctx.batch!,
    key,
    dataDir: store.dataDir,
    databaseUrl: store.url,
    baseUrl,
    t: undefined as unknown as World<C>,
    call: ({ key: k, ...o }) =>
      signedInject(app, k ?? key, { ...o, timestamp: o.timestamp ?? Math.floor(clock.now() / 1000) }),
    newKey: (o) => makeKey(ctx, o),
    createKey: (o) => makeKey(ctx, o),
    async usageRows(keyId) {
      let q = ctx.db.db.selectFrom('usage_log').selectAll();
      q = keyId === null ? q.where('key_id', 'is', null) : q.where('key_id', '=', keyId);
      return q.orderBy('time').orderBy('id').execute() as any;
    },
    async close() {
      await app.close();
      await closeContext(ctx).catch(() => undefined);
      await store.cleanup().catch(() => undefined);
    },
  };
  world.t = world;
  return world;
}

/** A world for `inject` tests (kept name): a ManualClock unless one is given. */
export type TestApp = World<Clock>;
export const createTestApp = (opts: Pick<WorldOptions, 'clock' | 'env' | 'logger'> = {}): Promise<TestApp> =>
  createWorld<Clock>(opts);

/** A world listening on 127.0.0.1 (kept name): the system clock unless one is given. */
export type TestServer = World<Clock> & { baseUrl: string };
export const startTestServer = (opts: Pick<WorldOptions, 'clock' | 'env'> = {}): Promise<TestServer> =>
  createWorld<Clock>({ ...opts, clock: opts.clock ?? systemClock, listen: true }) as Promise<TestServer>;

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
