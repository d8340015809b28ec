/**
 * The browser-facing files and the demo (issue 15 §4): `/capture/*` always; the demo page at `/`
 * and its backend `/demo/api/*` only when the demo is on (config `demo`; docs/operating.md).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { demoBackendRoutes } from './backend.js';
import { staticRoutes } from './static.js';

export async function demoPlugin(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await staticRoutes(app, ctx);
  if (ctx.config.demo !== 'off') await demoBackendRoutes(app, ctx);
}
