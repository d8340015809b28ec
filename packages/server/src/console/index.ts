/**
 * The console (issue 16): its API under `/api/v1` (session cookie, never an API key) and its pages
 * under `/console`. The API routes share one encapsulated scope so the guard runs on all of them
 * and on nothing else.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { takeJsonBody } from '../json.js';
import { consoleGuard } from './guard.js';
import { consoleAuthRoutes } from './auth-routes.js';
import { consoleKeyRoutes } from './key-routes.js';
import { consoleWebhookRoutes } from './webhook-routes.js';
import { consoleUsageRoutes } from './usage-routes.js';
import { consoleUserRoutes } from './user-routes.js';
import { consoleBillingRoutes } from './billing-routes.js';
import { consoleOverviewRoutes } from './overview-routes.js';
import { consolePages } from './static.js';

/** JSON bodies of console routes (the app keeps every body as bytes until a route parses it). */
async function parseBody(req: FastifyRequest): Promise<void> {
  const refused = takeJsonBody(req);
  if (refused === 'not_json_type') throw new ApiError('validation_error', 'body must be application/json');
  if (refused === 'invalid_json') throw new ApiError('validation_error', 'body is not valid JSON');
}

export async function consolePlugin(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.decorateRequest('consoleSession', undefined);
  await app.register(async (scope) => {
    scope.addHook('onRoute', (route) => {
      if (!route.config?.consolePublic) route.schema = { ...(route.schema ?? {}), security: [{ consoleSession: [] }] };
    });
    scope.addHook('onRequest', consoleGuard(ctx));
    scope.addHook('preValidation', parseBody);
    await consoleAuthRoutes(scope, ctx);
    await consoleOverviewRoutes(scope, ctx);
    await consoleKeyRoutes(scope, ctx);
    await consoleWebhookRoutes(scope, ctx);
    await consoleUsageRoutes(scope, ctx);
    await consoleUserRoutes(scope, ctx);
    await consoleBillingRoutes(scope, ctx);
  });
  await consolePages(app, ctx);
}
