/**
 * Composes the whole service from a context: the HTTP app with every tier's routes. The streaming
 * and batch tiers add their plugins here.
 */
import type { FastifyInstance } from 'fastify';
import { SIGNATURE_WINDOW_SEC } from '@vitals/protocol';
import { buildApp, type BuildOptions } from './app.js';
import type { AppContext } from './context.js';
import { batchPlugin } from './batch/index.js';
import { streamingPlugin } from './stream/index.js';
import { demoPlugin } from './demo/index.js';
import { sweepNonces } from './store/nonces.js';
import { REJECTION_RETENTION_MS, sweepRejections } from './store/auth-rejections.js';
import { DAY_MS, sweepUsageLog } from './store/usage-retention.js';

export async function buildServer(ctx: AppContext, opts: BuildOptions = {}): Promise<{ app: FastifyInstance }> {
  const app = await buildApp(ctx, {
    ...opts,
    plugins: [streamingPlugin, batchPlugin, demoPlugin, ...(opts.plugins ?? [])],
  });
  startNonceSweep(ctx, app);
  startUsageRetention(ctx, app);
  return { app };
}

/**
 * Spent nonces are only needed while their timestamp could still pass the ±300 s window; expired
 * rows are deleted every window so the table stays the size of one window of traffic. Old
 * refused-signature counts go with them.
 */
function startNonceSweep(ctx: AppContext, app: FastifyInstance): void {
  const timer = setInterval(() => {
    sweepNonces(ctx.db.db, ctx.clock.now()).catch((err: unknown) => app.log.warn({ err }, 'nonce sweep failed'));
    // Refused-signature counts are kept REJECTION_RETENTION_MS (store/auth-rejections.ts).
    sweepRejections(ctx.db.db, ctx.clock.now() - REJECTION_RETENTION_MS).catch((err: unknown) =>
      app.log.warn({ err }, 'auth rejection sweep failed'),
    );
  }, SIGNATURE_WINDOW_SEC * 1000);
  timer.unref();
  ctx.onClose.push(() => clearInterval(timer));
}

/** How often the usage-log retention sweep runs (it deletes in bounded batches). */
export const USAGE_RETENTION_INTERVAL_MS = 3_600_000;

/**
 * With `VITALS_USAGE_LOG_RETENTION_DAYS` > 0, rows older than the retention are deleted once at
 * start and then hourly (store/usage-retention.ts). 0 keeps every row (the default).
 */
function startUsageRetention(ctx: AppContext, app: FastifyInstance): void {
  const days = ctx.config.usageLogRetentionDays;
  if (!(days > 0)) return;
  let running = false;
  const sweep = (): void => {
    if (running) return;
    running = true;
    sweepUsageLog(ctx.db.db, ctx.clock.now() - days * DAY_MS)
      .then((n) => {
        if (n > 0) app.log.info({ deleted: n, retentionDays: days }, 'usage log retention');
      })
      .catch((err: unknown) => app.log.warn({ err }, 'usage log retention sweep failed'))
      .finally(() => {
        running = false;
      });
  };
  const first = setTimeout(sweep, 1000);
  const timer = setInterval(sweep, USAGE_RETENTION_INTERVAL_MS);
  first.unref();
  timer.unref();
  ctx.onClose.push(() => {
    clearTimeout(first);
    clearInterval(timer);
  });
}
