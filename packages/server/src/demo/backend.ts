/**
 * The demo's backend (issue 15 §4; CONTRACT-BROWSER "Demo backend routes"): the role a customer's
 * backend plays, played by the service with the development organization's key, server-side. The
 * page never sees a secret: each route makes the signed `/sdk/v1` call itself, in process
 * (`app.inject`), signed with the key's stored digest, which is the NCS1 HMAC key (spec:
 * Authentication). So every rule of a signed call applies unchanged: a disabled or expired key, the
 * rate limit, quotas, validation, and a usage-log row for each call.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomHex } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { parseUntrustedJson } from '../json.js';
import { ncs1Signature } from '../auth/signature.js';
import type { KeyRecord } from '../store/orgs-keys.js';
import { assertSameOrigin, demoServes } from './guard.js';

export const DEVELOPMENT_ORG_NAME = 'development';

/** The development organization's first key (cli/serve.ts creates both on the first start). */
export async function developmentKey(ctx: AppContext): Promise<KeyRecord | undefined> {
  const row = await ctx.db.db
    .selectFrom('api_keys')
    .innerJoin('orgs', 'orgs.id', 'api_keys.org_id')
    .select('api_keys.id')
    .where('orgs.name', '=', DEVELOPMENT_ORG_NAME)
    .orderBy('orgs.created_at')
    .orderBy('api_keys.created_at')
    .orderBy('api_keys.id')
    .limit(1)
    .executeTakeFirst();
  return row ? ctx.keys.get(row.id) : undefined;
}

/** A demo route's JSON body: empty is `{}`; anything but a JSON object is a 400. */
function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const raw = req.body;
  if (!Buffer.isBuffer(raw) || raw.length === 0) return {};
  if (!String(req.headers['content-type'] ?? '').includes('json'))
    throw new ApiError('validation_error', 'body must be application/json');
  let body: unknown;
  try {
    body = parseUntrustedJson(raw.toString('utf8'));
  } catch {
    throw new ApiError('validation_error', 'body is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiError('validation_error', 'body must be a JSON object');
  return body as Record<string, unknown>;
}

export async function demoBackendRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  /** Runs a signed call as the development key and answers with its status and body. */
  async function asDevelopmentKey(
    req: FastifyRequest,
    reply: FastifyReply,
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
  ): Promise<FastifyReply> {
    const key = await developmentKey(ctx);
    if (!key)
      throw new ApiError('not_found', 'the demo needs the development key that `vitals-server serve` creates at first');
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
    const ts = String(Math.floor(ctx.clock.now() / 1000));
    const nonce = randomHex(16);
    const res = await app.inject({
      method,
      url,
      payload,
      headers: {
        // The advertised addresses (wsUrl, manifestUrl) are the page's own when no public URL is set.
        host: req.headers.host ?? 'localhost',
        ...(payload ? { 'content-type': 'application/json' } : {}),
        'x-key-id': key.id,
        'x-timestamp': ts,
        'x-nonce': nonce,
        'x-signature': ncs1Signature(key.secretSha256, method, url, ts, nonce, payload),
      },
    });
    for (const h of ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      const v = res.headers[h];
      if (typeof v === 'string') void reply.header(h, v);
    }
    return reply.code(res.statusCode).type('application/json; charset=utf-8').send(res.body);
  }

  /** Demo routes exist only for the Hosts the demo serves, and only for their own page. */
  const guard = async (req: FastifyRequest): Promise<void> => {
    if (!demoServes(ctx.config.demo, req)) throw new ApiError('not_found', 'no such route');
    assertSameOrigin(ctx, req);
  };
  const hide = { hide: true };

  app.post('/demo/api/grant', { schema: hide, preHandler: guard }, async (req, reply) => {
    bodyOf(req);
    // Bound to the page's origin when the browser says it (it does on every POST).
    const origin = req.headers.origin;
    return asDevelopmentKey(req, reply, 'POST', '/sdk/v1/models/grant', origin ? { origin } : {});
  });

  app.post('/demo/api/session', { schema: hide, preHandler: guard }, async (req, reply) => {
    // The page's default capture length (CONTRACT.md "Demo page": durationSec 30); 20..180 is checked by the route.
    const { durationSec = 30 } = bodyOf(req);
    return asDevelopmentKey(req, reply, 'POST', '/sdk/v1/cloud/sessions', {
      platform: 'web',
      consent: true,
      durationSec,
    });
  });

  app.post('/demo/api/measurements', { schema: hide, preHandler: guard }, async (req, reply) =>
    asDevelopmentKey(req, reply, 'POST', '/sdk/v1/measurements', bodyOf(req)),
  );

  app.get<{ Params: { id: string } }>(
    '/demo/api/measurements/:id',
    { schema: hide, preHandler: guard },
    async (req, reply) => {
      const id = req.params.id;
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new ApiError('not_found', 'measurement not found');
      return asDevelopmentKey(req, reply, 'GET', `/sdk/v1/measurements/${id}`);
    },
  );
}
