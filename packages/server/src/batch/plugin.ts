/**
 * The batch tier's routes, registered by server.ts. In embedded mode (no VITALS_DATABASE_URL) the
 * process that serves the API also runs the worker; with PostgreSQL, `vitals-server worker`
 * processes do.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { uploadRoutes } from '../routes/uploads.js';
import { jobRoutes } from '../routes/jobs.js';
import { sessionFallbackRoutes } from '../routes/session-fallback.js';
import { batchOf } from './batch-runtime.js';

export async function batchPlugin(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await uploadRoutes(app, ctx);
  await jobRoutes(app, ctx);
  await sessionFallbackRoutes(app, ctx);
  if (!ctx.config.databaseUrl && batchOf(ctx).settings.embeddedWorker) await batchOf(ctx).startWorker();
}
