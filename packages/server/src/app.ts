/**
 * `buildApp(ctx)` returns a ready Fastify app without listening (STYLE habit 3). Every response,
 * errors and unknown routes included, carries `X-Request-Id` and the envelope.
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import { STATUS_CODES } from 'node:http';
import { isErrorCode, ERROR_STATUS, ErrorEnvelope, type ErrorCode } from '@vitals/protocol';
import { newRequestId } from './ids.js';
import { ApiError } from './errors.js';
import { schemaCompiler, serializerCompiler } from './validation.js';
import { takeJsonBody } from './json.js';
import { unavailableReason } from './store/unavailable.js';
import { SignatureLayer } from './auth/signature.js';
import type { AppContext } from './context.js';
import { measurementRoutes } from './routes/measurements.js';
import { userRoutes } from './routes/users.js';
import { logRoutes } from './routes/logs.js';
import { authTestRoutes } from './routes/auth-test.js';
import { publicRoutes } from './routes/public.js';
import { consolePlugin } from './console/index.js';
import { modelRoutes } from './routes/models.js';

export interface BuildOptions {
  /** Pino logger options, or false for none (tests). */
  logger?: boolean | Record<string, unknown>;
  /** Extra route plugins (the streaming and batch tiers register themselves here). */
  plugins?: Array<(app: FastifyInstance, ctx: AppContext, sig: SignatureLayer) => Promise<void>>;
}

export const SIGNED_BODY_LIMIT = 2 * 1024 * 1024;

export async function buildApp(ctx: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? false,
    // Fastify's own request lines log the concrete URL; ours (onResponse) log the route pattern.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newRequestId(),
    // req.ip (every per-address limit), req.protocol and req.host follow X-Forwarded-* only from a
    // peer VITALS_TRUST_PROXY trusts (trust-proxy.ts); by default none is.
    trustProxy: ctx.config.trustProxy && [...ctx.config.trustProxy],
    bodyLimit: SIGNED_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Refusals made before routing carry the envelope and X-Request-Id too (issue 19, defect 5).
    frameworkErrors: (err, _req, reply) => {
      const { status, code, message } = frameworkRefusal(err);
      void (reply as unknown as import('fastify').FastifyReply)
        .code(status)
        .header('X-Request-Id', String(reply.request.id))
        .send({ ok: false, error: { code, message } });
    },
    clientErrorHandler: clientError,
  });
  app.setValidatorCompiler(schemaCompiler);
  app.setSerializerCompiler(serializerCompiler);

  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('auth', undefined);
  app.decorateRequest('arrivedAt', 0);
  app.decorateRequest('usageQualityLevel', undefined);
  app.decorateRequest('usageRecorded', false);

  app.addHook('onRequest', async (req, reply) => {
    req.arrivedAt = ctx.clock.now();
    reply.header('X-Request-Id', String(req.id));
  });

  // Bodies are kept as the exact bytes received: the signature covers them, and JSON is parsed
  // only after the signature layer has ruled (so a garbage body from a stranger is a 401, not a 400).
  // All of them: Fastify's built-in text/plain parser would otherwise hand over a string, and a
  // signed text/plain body would fail as a bad signature instead of a 400.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  await app.register(cors, {
    origin: true,
    methods: ['GET', 'POST', 'PUT', 'OPTIONS'],
    allowedHeaders: ['content-type', 'x-key-id', 'x-timestamp', 'x-nonce', 'x-signature', 'authorization'],
    exposedHeaders: ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'],
    maxAge: 600,
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vital-Signs Measurement Service',
        version: ctx.config.version,
        description: 'Generated from the route schemas; see docs/ for the prose.',
      },
      tags: [
        {
          name: 'console',
          description:
            "The console's API (docs/console.md): the session cookie of POST /api/v1/auth/login, never an API key; state changes only from the console's own origin.",
        },
      ],
      components: {
        securitySchemes: {
          consoleSession: { type: 'apiKey', in: 'cookie', name: 'vitals_console' },
          NCS1: {
            type: 'apiKey',
            in: 'header',
            name: 'x-signature',
            description:
              'NCS1: headers x-key-id, x-timestamp, x-nonce, x-signature = Base64(HMAC-SHA256(hex(SHA-256(secret)), canonical string)).',
          },
          ModelGrant: {
            type: 'http',
            scheme: 'bearer',
            description: 'A model grant from POST /sdk/v1/models/grant: `Authorization: Bearer <grant>`.',
          },
        },
      },
    },
  });

  const sig = new SignatureLayer(ctx);
  app.addHook('onRoute', (route) => {
    // Every route with documented answers can also fail on the service's side (500 internal_error,
    // 503 service_unavailable or cloud_unavailable): say so in the OpenAPI document, with the envelope.
    const responses = route.schema?.response as Record<string, unknown> | undefined;
    if (responses && !('5xx' in responses))
      route.schema = { ...route.schema, response: { ...responses, '5xx': ErrorEnvelope } };
    if (!route.config?.signed) return;
    const pre = route.preValidation ? [route.preValidation].flat() : [];
    route.preValidation = [sig.verify, parseJsonBody, ...pre];
    route.schema = { ...(route.schema ?? {}), security: [{ NCS1: [] }] };
  });
  app.addHook('onSend', async (req, reply, payload) => {
    await sig.recordSuccess(req, reply);
    return payload;
  });
  app.addHook('onResponse', async (req, reply) => {
    if (!opts.logger) return;
    // Route pattern, never the concrete URL: upload URLs are credentials and must not be logged.
    req.log.info(
      {
        reqId: req.id,
        method: req.method,
        route: req.routeOptions.url ?? '(unmatched)',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  app.setNotFoundHandler((_req, reply) => {
    void reply.code(404).send({ ok: false, error: { code: 'not_found', message: 'no such route' } });
  });
  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    if (clientLeft(req, err)) {
      // The client reset the connection before its body arrived in full (issue 19, defect 4): not
      // the store's failure, and nobody is left to answer. Info, so the outage warning stays true.
      const route = req.routeOptions.url ?? '(unmatched)';
      req.log.info({ method: req.method, route }, 'client disconnected before its request body arrived');
      void reply.code(400).send({ ok: false, error: { code: 'validation_error', message: 'request body cut short' } });
      return;
    }
    const { status, code, message, headers } = toWireError(err);
    if (code === 'service_unavailable') {
      // Expected while the database is away: a warning, with the reason's short token only (no
      // error object: a socket error names the database host, a driver error may quote SQL).
      const route = req.routeOptions.url ?? '(unmatched)';
      req.log.warn({ method: req.method, route, reason: unavailableReason(err) }, 'store unavailable: answered 503');
    } else if (status >= 500) req.log.error({ err }, 'unhandled error');
    void reply.code(status).headers(headers).send({ ok: false, error: { code, message } });
  });

  await publicRoutes(app, ctx);
  await authTestRoutes(app, ctx);
  await measurementRoutes(app, ctx);
  await userRoutes(app, ctx);
  await logRoutes(app, ctx);
  await consolePlugin(app, ctx);
  await modelRoutes(app, ctx);
  for (const plugin of opts.plugins ?? []) await plugin(app, ctx, sig);

  await app.ready();
  return app;
}

/** preValidation step for signed JSON routes: parse the verified bytes (json.ts `takeJsonBody`). */
async function parseJsonBody(req: import('fastify').FastifyRequest): Promise<void> {
  const refused = takeJsonBody(req);
  if (refused === 'not_json_type') throw new ApiError('validation_error', 'body must be application/json');
  if (refused === 'invalid_json')
    throw new ApiError(
      'validation_error',
      'body is not valid JSON (or carries a __proto__ / constructor.prototype key)',
    );
}

/**
 * The request stream failed because its client went away: Node's IncomingMessage ends an unfinished
 * body with `ECONNRESET` "aborted" (the same code as a store's socket reset, which is why the
 * message and the unfinished body are both checked), and a pipeline reading it reports a premature
 * close.
 */
export function clientLeft(req: import('fastify').FastifyRequest, err: unknown): boolean {
  if (req.raw.complete) return false;
  const e = err as { code?: unknown; message?: unknown };
  return (e?.code === 'ECONNRESET' && e.message === 'aborted') || e?.code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/**
 * Fastify's refusals before a route is chosen: a path that is not valid percent-encoding, and a path
 * parameter over `maxParamLength` (200, the longest `userRef`; no id of ours is longer, so such a
 * resource cannot exist: the plain 404 an unknown id gets).
 */
export function frameworkRefusal(err: { code?: string }): { status: number; code: ErrorCode; message: string } {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return { status: ERROR_STATUS.not_found, code: 'not_found', message: 'resource not found' };
  if (err.code === 'FST_ERR_BAD_URL')
    return { status: ERROR_STATUS.validation_error, code: 'validation_error', message: 'the URL is not valid' };
  return { status: ERROR_STATUS.validation_error, code: 'validation_error', message: 'invalid request' };
}

/**
 * Node's HTTP parser refusals (the server's `clientError`): headers over 16 KB, a bare LF or NUL in a
 * header, a request that did not arrive in time. Answered on the socket with the envelope and a
 * request id, then closed, as Node's own handler does with its bare "Client Error".
 */
export function clientError(err: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody to answer (https://nodejs.org/api/http.html#event-clienterror).
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status: number;
  let code: ErrorCode;
  let message: string;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    [status, code, message] = [431, 'headers_too_large', 'request headers exceed 16 KB'];
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    [status, code, message] = [408, 'request_timeout', 'the request did not arrive in time'];
  } else {
    [status, code, message] = [400, 'validation_error', 'malformed HTTP request'];
  }
  if (socket.writable) {
    const body = JSON.stringify({ ok: false, error: { code, message } });
    const head = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${newRequestId()}`,
      'Connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  }
  socket.destroySoon();
}

/** The one mapper from any error to the wire (STYLE habit 1). */
export function toWireError(err: unknown): {
  status: number;
  code: string;
  message: string;
  headers: Record<string, string>;
} {
  if (err instanceof ApiError)
    return { status: err.status, code: err.code, message: err.message, headers: err.headers };
  // The database is slow, saturated or down (store/unavailable.ts): retryable, unlike internal_error.
  // A fixed message: the driver's would name hosts or quote SQL.
  if (unavailableReason(err) !== undefined) {
    const message = 'the service is temporarily unavailable; retry shortly';
    return { status: 503, code: 'service_unavailable', message, headers: { 'Retry-After': '1' } };
  }
  const e = err as FastifyError;
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return { status: 413, code: 'payload_too_large', message: 'request body too large', headers: {} };
  if (typeof e?.code === 'string' && isErrorCode(e.code) && e.code !== 'internal_error')
    return { status: ERROR_STATUS[e.code], code: e.code, message: e.message, headers: {} };
  if (e?.validation || (e?.statusCode && e.statusCode >= 400 && e.statusCode < 500))
    return { status: 400, code: 'validation_error', message: e.message ?? 'invalid request', headers: {} };
  return { status: 500, code: 'internal_error', message: 'internal error', headers: {} };
}
