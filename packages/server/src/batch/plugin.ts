/**
 * The batch tier's routes, registered by server.ts. The process that serves the API also runs a
 * worker, on SQLite and PostgreSQL alike, unless VITALS_EMBEDDED_WORKER=0 (a scale-out API node
 * beside `vitals-server worker` processes; issue 14). Either way it watches that some worker is
 * alive while jobs wait (batch/heartbeat.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { uploadRoutes } from '../routes/uploads.js';
import { jobRoutes } from '../routes/jobs.js';
import { sessionFallbackRoutes } from '../routes/session-fallback.js';
import { batchOf } from './runtime.js';
import { watchWorkers } from './heartbeat.js';

export async function batchPlugin(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await uploadRoutes(app, ctx);
  await jobRoutes(app, ctx);
  await sessionFallbackRoutes(app, ctx);
  const embedded = batchOf(ctx).settings.embeddedWorker;
  if (embedded) await batchOf(ctx).startWorker();
  await watchWorkers(ctx, app.log, embedded);
}
