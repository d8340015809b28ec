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
import { sweepNonces } from './store/nonces.js';

export async function buildServer(ctx: AppContext, opts: BuildOptions = {}): Promise<{ app: FastifyInstance }> {
  const app = await buildApp(ctx, { ...opts, plugins: [streamingPlugin, batchPlugin, ...(opts.plugins ?? [])] });
  startNonceSweep(ctx, app);
  return { app };
}

/**
 * Spent nonces are only needed while their timestamp could still pass the ±300 s window; expired
 * rows are deleted every window so the table stays the size of one window of traffic.
 */
function startNonceSweep(ctx: AppContext, app: FastifyInstance): void {
  const timer = setInterval(() => {
    sweepNonces(ctx.db.db, ctx.clock.now()).catch((err: unknown) => app.log.warn({ err }, 'nonce sweep failed'));
  }, SIGNATURE_WINDOW_SEC * 1000);
  timer.unref();
  ctx.onClose.push(() => clearInterval(timer));
}
