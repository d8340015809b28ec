/**
 * Composes the whole service from a context: the HTTP app with every tier's routes. The streaming
 * and batch tiers add their plugins here.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from './app.js';
import type { AppContext } from './context.js';
import { batchPlugin } from './batch/index.js';
import { streamingPlugin } from './stream/index.js';

export async function buildServer(ctx: AppContext, opts: BuildOptions = {}): Promise<{ app: FastifyInstance }> {
  const app = await buildApp(ctx, { ...opts, plugins: [streamingPlugin, batchPlugin, ...(opts.plugins ?? [])] });
  return { app };
}
