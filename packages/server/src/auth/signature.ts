/**
 * The signature layer (spec: Authentication). Checks run in the spec's order: missing header,
 * nonce length, non-numeric timestamp, skew, unknown key, disabled key, expired key, bad signature,
 * reused nonce, rate limit. Every ruling is written to the usage log: failures here, successes in
 * `recordSuccess` once the handler has answered 2xx.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  LOGS_PER_MIN,
  NONCE_MAX_LENGTH,
  NONCE_MIN_LENGTH,
  SIGNATURE_WINDOW_SEC,
  type UsageErrorCode,
} from '@vitals/protocol';
import { ApiError } from '../errors.js';
import { newLogId } from '../ids.js';
import type { KeyRecord } from '../store/orgs-keys.js';
import { spendNonce } from '../store/nonces.js';
import { appendUsage, type UsageRow } from '../store/usage-log.js';
import { rateHeaders, RateLimiter } from './rate-limiter.js';
import type { AppContext } from '../context.js';

export interface AuthState {
  key: KeyRecord;
}

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
    auth?: AuthState;
    arrivedAt: number;
    /** Set by a handler that stored a measurement: the usage row's `qualityLevel`. */
    usageQualityLevel?: string | null;
    /** Set by a handler that wrote the success row itself, in its own write unit. */
    usageRecorded?: boolean;
  }
  interface FastifyContextConfig {
    /** The route is behind the NCS1 signature layer. */
    signed?: boolean;
    /** The route is GET /sdk/v1/logs: its own polling limit, and successful reads are not logged. */
    usageLogRead?: boolean;
  }
}

const MESSAGES: Record<UsageErrorCode, string> = {
  missing_credentials: 'missing one of x-key-id, x-timestamp, x-nonce, x-signature',
  invalid_nonce: `x-nonce must be ${NONCE_MIN_LENGTH}-${NONCE_MAX_LENGTH} characters`,
  invalid_timestamp: 'x-timestamp must be Unix seconds',
  timestamp_out_of_window: `x-timestamp is more than ${SIGNATURE_WINDOW_SEC} s from the server clock`,
  unknown_key: 'unknown key',
  key_disabled: 'key is disabled',
  key_expired: 'key has expired',
  invalid_signature: 'signature does not match',
  nonce_reused: 'nonce already used',
  rate_limited: 'rate limit exceeded',
};

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

export class SignatureLayer {
  readonly perKey = new RateLimiter(60_000);
  readonly logs = new RateLimiter(60_000);

  constructor(private readonly ctx: AppContext) {}

  /** Fastify preValidation hook for signed routes. */
  verify = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const now = this.ctx.clock.now();
    const keyId = header(req, 'x-key-id');
    const ts = header(req, 'x-timestamp');
    const nonce = header(req, 'x-nonce');
    const signature = header(req, 'x-signature');
    const logKey = keyId ? keyId.slice(0, 128) : null;

    if (!keyId || !ts || !nonce || !signature) return this.reject(req, reply, logKey, 'missing_credentials');
    if (nonce.length < NONCE_MIN_LENGTH || nonce.length > NONCE_MAX_LENGTH)
      return this.reject(req, reply, logKey, 'invalid_nonce');
    if (!/^-?\d{1,15}$/.test(ts)) return this.reject(req, reply, logKey, 'invalid_timestamp');
    if (Math.abs(Number(ts) - now / 1000) > SIGNATURE_WINDOW_SEC)
      return this.reject(req, reply, logKey, 'timestamp_out_of_window');

    const key = await this.ctx.keys.get(keyId);
    if (!key) return this.reject(req, reply, logKey, 'unknown_key');
    if (key.status !== 'active') return this.reject(req, reply, key.id, 'key_disabled');
    if (key.expiresAt !== null && key.expiresAt <= now) return this.reject(req, reply, key.id, 'key_expired');

    // The signature covers the exact bytes received. This hook runs before JSON parsing, so the
    // bytes are still `req.body` (a Buffer from the catch-all parser in app.ts).
    const raw = Buffer.isBuffer(req.body) ? req.body : req.rawBody;
    if (!verifyNcs1(key.secretSha256, req.method, req.url, ts, nonce, raw, signature))
      return this.reject(req, reply, key.id, 'invalid_signature');

    const ttlMs = 2 * SIGNATURE_WINDOW_SEC * 1000;
    const fresh = await this.ctx.db.write((tx) => spendNonce(tx, key.id, nonce, now, ttlMs), {
      single: true,
    });
    if (!fresh) return this.reject(req, reply, key.id, 'nonce_reused');

    // CLARIFICATIONS 3: the per-key limit covers every signed path; the logs endpoint also has its own.
    if (key.rateLimitPerMin > 0) {
      const d = this.perKey.hit(key.id, key.rateLimitPerMin, now);
      if (!d.allowed) return this.reject(req, reply, key.id, 'rate_limited', rateHeaders(d));
    }
    if (req.routeOptions.config.usageLogRead) {
      const d = this.logs.hit(key.id, LOGS_PER_MIN, now);
      if (!d.allowed) return this.reject(req, reply, key.id, 'rate_limited', rateHeaders(d));
    }
    req.auth = { key };
  };

  private async reject(
    req: FastifyRequest,
    _reply: FastifyReply,
    keyId: string | null,
    code: UsageErrorCode,
    headers: Record<string, string> = {},
  ): Promise<never> {
    const rateLimited = code === 'rate_limited';
    await appendUsage(this.ctx.db.db, keyId, {
      id: newLogId(),
      time: req.arrivedAt,
      endpoint: pathOnly(req.url),
      method: req.method,
      status: rateLimited ? 'rate_limited' : 'unauthorized',
      latencyMs: Math.max(0, Math.round(this.ctx.clock.now() - req.arrivedAt)),
      requestId: String(req.id),
      error: MESSAGES[code],
      errorCode: code,
      qualityLevel: null,
    });
    if (rateLimited) throw new ApiError('rate_limited', MESSAGES[code], headers);
    if (code === 'key_disabled') throw new ApiError('key_disabled', MESSAGES[code]);
    throw new ApiError('unauthorized', MESSAGES[code]);
  }

  /** onSend hook: a 2xx answer to an authenticated call is a `success` row (not for log reads). */
  recordSuccess = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!req.auth || req.usageRecorded || reply.statusCode >= 300 || req.routeOptions.config.usageLogRead)
      return;
    await appendUsage(
      this.ctx.db.db,
      req.auth.key.id,
      successRow(req, this.ctx.clock.now(), req.usageQualityLevel ?? null),
    );
  };
}

/**
 * The `success` row of an authenticated call. A handler that stores something writes it with its
 * own rows, all or none (then `req.usageRecorded`); `latencyMs` then ends when that write is issued.
 */
export function successRow(req: FastifyRequest, now: number, qualityLevel: string | null): UsageRow {
  return {
    id: newLogId(),
    time: req.arrivedAt,
    endpoint: pathOnly(req.url),
    method: req.method,
    status: 'success',
    latencyMs: Math.max(0, Math.round(now - req.arrivedAt)),
    requestId: String(req.id),
    error: null,
    errorCode: null,
    qualityLevel,
  };
}

/**
 * NCS1 verification with node:crypto, synchronously: the same recipe as protocol's WebCrypto
 * `verifySignature` (whose vectors are in packages/protocol/test/ncs1.test.ts), without three
 * thread-pool round trips on every signed call. The HMAC key is the stored hex digest as text.
 */
export function verifyNcs1(
  secretSha256Hex: string,
  method: string,
  url: string,
  timestamp: string,
  nonce: string,
  body: Buffer | undefined,
  signature: string,
): boolean {
  const bodyHash = createHash('sha256')
    .update(body ?? Buffer.alloc(0))
    .digest('hex');
  const canonical = ['NCS1', method.toUpperCase(), pathOnly(url), timestamp, nonce, bodyHash].join('\n');
  const expected = Buffer.from(createHmac('sha256', secretSha256Hex).update(canonical).digest('base64'));
  const given = Buffer.from(signature);
  // Lengths are public (a SHA-256 signature is always 44 characters); the bytes compare in constant time.
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
