/**
 * Model grants and the model bundle (spec: POST /sdk/v1/models/grant, "Without the grant the
 * browser cannot fetch the model key"; issue 15 §1; docs/decisions.md, "Model grants").
 *
 * - `POST /sdk/v1/models/grant`: NCS1-signed (the customer's backend); mints a grant token
 *   (domain/model-grant.ts), optionally bound to one origin.
 * - `GET /sdk/v1/models/manifest`, `GET /sdk/v1/models/files/:sha256`: `Authorization: Bearer
 *   <grant>`; without a valid grant (missing, malformed, tampered, expired, another origin, a key
 *   since disabled or expired) 401 `unauthorized` and nothing of the bundle. Files are addressed
 *   by their SHA-256 and immutable. CORS for any origin comes from app.ts (the grant is the
 *   binding, not the CORS policy).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  ErrorEnvelope,
  MODEL_GRANT_TTL_SEC,
  ModelGrant,
  ModelGrantRequest,
  ModelManifest,
  envelopeOf,
} from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { bearerGrant, signModelGrant, verifyModelGrant, type GrantClaims } from '../domain/model-grant.js';
import type { ModelBundle } from '../models/bundle.js';
import { sendEntity } from '../gzip-cache.js';
import { createHash } from 'node:crypto';
import { RateLimiter, rateHeaders } from '../auth/rate-limiter.js';
import { requestAddress } from '../store/auth-rejections.js';

export const MODELS_MANIFEST_PATH = '/sdk/v1/models/manifest';
export const MODELS_FILES_PATH = '/sdk/v1/models/files';

/** One year, immutable: a file's address is its content. `private`: a shared cache has no grant. */
export const MODEL_FILE_CACHE_CONTROL = 'private, max-age=31536000, immutable';

const GrantSecurity = [{ ModelGrant: [] }];

/**
 * Bundle downloads (manifest and files together) per minute: a page load takes 7 (the manifest and
 * six files, which the browser then caches for a year). Per address: a few dozen page loads a
 * minute behind one NAT; per grant: a few reloads within its lifetime (docs/decisions.md "Model grants").
 */
export const MODEL_DOWNLOADS_PER_MIN = { address: 120, grant: 30 } as const;
const MINUTE_MS = 60_000;

/** 429 `rate_limited` (spec: Rate limits) with `Retry-After` and the RateLimit headers. */
function limit(limiter: RateLimiter, key: string, max: number, now: number, what: string): void {
  const d = limiter.hit(key, max, now);
  if (!d.allowed)
    throw new ApiError('rate_limited', `too many model downloads ${what}; try again in ${d.resetSec} s`, {
      'Retry-After': String(d.resetSec),
      ...rateHeaders(d),
    });
}

/** The base address the service advertises (VITALS_PUBLIC_URL, the listener, else this request). */
export function publicBase(ctx: AppContext, req: FastifyRequest): string {
  return (ctx.publicUrl ?? `${req.protocol}://${req.host}`).replace(/\/+$/, '');
}

/** `origin` as the browser will send it (lowercase host, default port dropped), or a 400. */
function normalizeOrigin(origin: string): string {
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    throw new ApiError('validation_error', 'origin must be an origin such as https://app.example.com');
  }
  if (u.username || u.password || u.pathname !== '/' || u.search || u.hash || origin.endsWith('/'))
    throw new ApiError('validation_error', 'origin must be scheme://host[:port], without a path');
  return u.origin;
}

export async function modelRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const perAddress = new RateLimiter(MINUTE_MS);
  const perGrant = new RateLimiter(MINUTE_MS);
  /** The address's budget first (invalid grants count too), then the grant's. */
  const download = async (req: FastifyRequest): Promise<ModelBundle> => {
    const now = ctx.clock.now();
    limit(perAddress, requestAddress(req), MODEL_DOWNLOADS_PER_MIN.address, now, 'from this address');
    const bundle = await requireGrant(ctx, req);
    // Keyed by the token's hash: the grant itself is not kept.
    const grantKey = createHash('sha256')
      .update(req.headers.authorization ?? '')
      .digest('base64url');
    limit(perGrant, grantKey, MODEL_DOWNLOADS_PER_MIN.grant, now, 'with this grant');
    return bundle;
  };
  app.post<{ Body: ModelGrantRequest | undefined }>(
    '/sdk/v1/models/grant',
    {
      config: { signed: true },
      // Every field is optional, and so is the body: an empty one is `{}` (after the signature check).
      preValidation: async (req) => {
        req.body ??= {};
      },
      schema: {
        summary: 'Mint a short-lived model grant for one browser',
        description:
          'Called by the customer backend. The browser sends the grant as `Authorization: Bearer <grant>` to the manifest and file routes.',
        body: Type.Optional(ModelGrantRequest),
        response: { 201: envelopeOf(ModelGrant), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const key = req.auth!.key;
      const body = req.body ?? {};
      const origin = body.origin === undefined ? undefined : normalizeOrigin(body.origin);
      const ttlSec = body.ttlSec ?? MODEL_GRANT_TTL_SEC.default;
      const bundle = await ctx.modelBundle();
      const iat = Math.floor(ctx.clock.now() / 1000);
      const claims: GrantClaims = { kid: key.id, org: key.orgId, mv: bundle.modelsVersion, iat, exp: iat + ttlSec };
      if (origin !== undefined) claims.ori = origin;
      return reply.code(201).send({
        ok: true,
        data: {
          grant: signModelGrant(ctx.serverSecret, claims),
          expiresAt: claims.exp * 1000,
          modelsVersion: bundle.modelsVersion,
          ...(origin !== undefined ? { origin } : {}),
          manifestUrl: publicBase(ctx, req) + MODELS_MANIFEST_PATH,
        },
      });
    },
  );

  app.get(
    MODELS_MANIFEST_PATH,
    {
      schema: {
        summary: 'The model bundle manifest (with a model grant)',
        description: '`url` is a path: resolve it against the manifest address.',
        security: GrantSecurity,
        response: { 200: envelopeOf(ModelManifest), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const bundle = await download(req);
      // Per grant, and short-lived: never cached.
      void reply.header('Cache-Control', 'no-store');
      return {
        ok: true,
        data: {
          modelsVersion: bundle.modelsVersion,
          files: bundle.files.map((f) => ({
            name: f.name,
            url: `${MODELS_FILES_PATH}/${f.sha256}`,
            sha256: f.sha256,
            bytes: f.bytes,
            contentType: f.contentType,
          })),
        },
      };
    },
  );

  app.get<{ Params: { sha256: string } }>(
    `${MODELS_FILES_PATH}/:sha256`,
    {
      schema: {
        summary: 'One file of the model bundle, by its SHA-256 (with a model grant)',
        security: GrantSecurity,
        params: Type.Object({ sha256: Type.String({ maxLength: 64 }) }),
        response: {
          200: {
            description: 'The bytes; immutable (`Cache-Control: private, max-age=31536000, immutable`, `ETag`)',
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          },
          304: { description: 'Not modified (`If-None-Match` named this file)', type: 'null' },
          '4xx': ErrorEnvelope,
        },
      },
    },
    async (req, reply) => {
      const bundle = await download(req);
      const file = bundle.byHash.get(req.params.sha256);
      if (!file) throw notFound('model file');
      return sendFile(req, reply, file);
    },
  );
}

function sendFile(
  req: FastifyRequest,
  reply: FastifyReply,
  file: { sha256: string; contentType: string; data: Buffer },
): FastifyReply {
  void reply.header('Cache-Control', MODEL_FILE_CACHE_CONTROL);
  // gzip once per file where it pays (the WASM runtime and the JSON topologies; not the weights).
  return sendEntity(req, reply, { etag: `"${file.sha256}"`, data: file.data, contentType: file.contentType });
}

/**
 * The bundle a request's grant unlocks, or 401 `unauthorized`. Checked: the token (signature,
 * shape, expiry), the request's `Origin` against the grant's bound origin (a browser always sends
 * `Origin` on a cross-origin request; a same-origin GET has none), the key (still active and not
 * expired: a disabled key's grants die with it), and the bundle version.
 */
export async function requireGrant(ctx: AppContext, req: FastifyRequest): Promise<ModelBundle> {
  const token = bearerGrant(req.headers.authorization);
  if (token === undefined)
    throw new ApiError('unauthorized', 'a model grant is required: Authorization: Bearer <grant>');
  const now = ctx.clock.now();
  const check = verifyModelGrant(ctx.serverSecret, token, now);
  if (!check.ok)
    throw new ApiError('unauthorized', check.reason === 'expired' ? 'model grant expired' : 'model grant invalid');
  const { claims } = check;
  const origin = req.headers.origin;
  if (claims.ori !== undefined && origin !== undefined && origin !== claims.ori)
    throw new ApiError('unauthorized', 'model grant is bound to another origin');
  const key = await ctx.keys.get(claims.kid);
  if (!key || key.orgId !== claims.org || key.status !== 'active' || (key.expiresAt !== null && key.expiresAt <= now))
    throw new ApiError('unauthorized', 'the key that minted this model grant is no longer active');
  const bundle = await ctx.modelBundle();
  if (claims.mv !== bundle.modelsVersion)
    throw new ApiError('unauthorized', 'model grant is for another model bundle; mint a new one');
  return bundle;
}
