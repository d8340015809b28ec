/**
 * Test support: a real server on a free loopback port with its own database (SQLite in a temp
 * dir, or a fresh PostgreSQL schema when VITALS_TEST_DATABASE_URL is set), and key factories.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { randomHex } from '@vitals/protocol';
import { loadConfig, type Config } from './config.js';
import { ManualClock, systemClock, type Clock } from './clock.js';
import { openDatabase, type DbHandle } from './store/db.js';
import { createContext, closeContext } from './deps.js';
import type { AppContext } from './context.js';
import { createOrg, createKey, microFromUsd, type CreateKeyInput } from './store/orgs-keys.js';
import { buildServer } from './server.js';

export { ManualClock };

export interface TestKeyOptions {
  orgId?: string;
  rateLimitPerMin?: number;
  quotaSecondsMonth?: number;
  tokenQuotaMonthUsd?: number;
  tokenBalanceUsd?: number;
  expiresAt?: number;
  status?: 'active' | 'disabled';
  features?: string[];
}

export interface TestKey {
  keyId: string;
  secret: string;
  orgId: string;
}

/** A database of its own for one test file: SQLite in a temp dir, or a new PostgreSQL schema. */
export async function openTestDatabase(): Promise<{ db: DbHandle; dataDir: string; cleanup(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-test-'));
  const url = process.env.VITALS_TEST_DATABASE_URL;
  if (url) {
    const schema = `t_${randomHex(6)}`;
    const admin = openDatabase({ databaseUrl: url, poolSize: 1 });
    await admin.db.schema.createSchema(schema).execute();
    await admin.close();
    const db = openDatabase({ databaseUrl: url, pgSchema: schema, poolSize: 5 });
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
  const orgId = opts.orgId ?? (await createOrg(ctx.db.db, `test-${randomHex(3)}`, opts.tokenBalanceUsd ?? 100, now)).id;
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

/** An app for `inject` tests, with an injected clock (a ManualClock unless one is given). */
export async function createTestApp(opts: { clock?: Clock; env?: Record<string, string> } = {}): Promise<TestApp> {
  const store = await openTestDatabase();
  const config = loadConfig({ ...opts.env, VITALS_DATA_DIR: store.dataDir });
  const clock = opts.clock ?? new ManualClock(Date.now());
  const ctx = await createContext(config, { clock, db: store.db });
  const { app } = await buildServer(ctx);
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
