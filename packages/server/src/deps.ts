/**
 * The one place that picks adapters (STYLE habit 4): SQLite in the data dir by default, PostgreSQL
 * when VITALS_DATABASE_URL is set.
 */
import path from 'node:path';
import type { Config } from './config.js';
import { systemClock, type Clock } from './clock.js';
import { openDatabase, type DbHandle, type OpenOptions } from './store/db.js';
import { migrateToLatest } from './store/migrate.js';
import { serverSecret } from './store/settings.js';
import { KeyCache, type AppContext } from './context.js';
import { defaultBundleSources, modelBundle } from './models/bundle.js';
import { createBatchRuntime, type BatchConfig, loadBatchConfig } from './batch/index.js';
import { SettlementEvents, type ListenerFailure } from './domain/settlement-events.js';
import { journalSettlement } from './webhooks/enqueue.js';
import { paymentProviderFor } from './console/payments.js';

export function openStore(config: Config, extra: { pgSchema?: string } = {}): DbHandle {
  return config.databaseUrl
    ? openDatabase({ databaseUrl: config.databaseUrl, pgSchema: extra.pgSchema, ...storeLimits(config) })
    : openDatabase({ sqlitePath: path.join(config.dataDir, 'vitals.db'), backgroundCheckpoint: true });
}

/** The store's limits on PostgreSQL from the configuration (VITALS_DB_*; docs/operating.md). */
export function storeLimits(
  config: Config,
): Pick<OpenOptions, 'connectTimeoutMs' | 'statementTimeoutMs' | 'maxQueuedWrites'> {
  return {
    connectTimeoutMs: config.dbConnectTimeoutMs,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    maxQueuedWrites: config.dbMaxQueuedWrites,
  };
}

export async function createContext(
  config: Config,
  opts: {
    clock?: Clock;
    db?: DbHandle;
    migrate?: boolean;
    env?: Record<string, string | undefined>;
    batch?: Partial<BatchConfig>;
    /** Where a settlement listener's failure is reported (default: a process warning). */
    onListenerFailure?: ListenerFailure;
  } = {},
): Promise<AppContext> {
  const db = opts.db ?? openStore(config);
  // Migrations run without the statement limits (DbHandle.unlimited): an upgrade may build an index.
  if (opts.migrate !== false) await db.unlimited(migrateToLatest);
  const ctx: AppContext = {
    config,
    clock: opts.clock ?? systemClock,
    db,
    keys: new KeyCache(db),
    serverSecret: await serverSecret(db.db, config.serverSecret),
    settlements: new SettlementEvents(opts.onListenerFailure),
    modelBundle: () => modelBundle(defaultBundleSources()),
    onClose: [],
    publicUrl: config.publicUrl,
    payments: paymentProviderFor(config.consolePayments),
  };
  // Batch tier: object store (data dir) and job queue (in-process, or pg-boss with PostgreSQL).
  ctx.batch = createBatchRuntime(ctx, config, { ...loadBatchConfig(opts.env ?? process.env), ...opts.batch });
  // Every settled job (stream or batch) journals its webhook deliveries (docs/webhooks.md).
  ctx.settlements.on('journal webhook deliveries', async (job) => {
    await journalSettlement(ctx, job);
  });
  return ctx;
}

export async function closeContext(ctx: AppContext): Promise<void> {
  for (const fn of ctx.onClose.splice(0).reverse()) await fn();
  await ctx.db.close();
}
