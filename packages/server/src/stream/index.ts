/**
 * The cloud streaming tier (issue 5; docs/streaming.md): session creation and the WebSocket
 * endpoint. Registered once in server.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { sessionRoutes } from '../routes/sessions.js';
import { StreamHub } from './hub.js';

export { StreamHub } from './hub.js';
export { FRAME_SPEC } from './frame-spec.js';
export { STREAM_PATH } from './paths.js';

export async function streamingPlugin(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await sessionRoutes(app, ctx);
  const hub = new StreamHub(ctx, app.log);
  hub.attach(app.server);
  // Sessions end before the HTTP server and the database close.
  app.addHook('preClose', async () => hub.close());
  ctx.onClose.push(() => hub.close());
}
