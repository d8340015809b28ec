/**
 * The signature layer (spec: Authentication). Checks run in the spec's order: missing header,
 * nonce length, non-numeric timestamp, skew, unknown key, disabled key, expired key, bad signature,
 * reused nonce, rate limit. Every ruling is written to the usage log: failures here, successes in
 * `recordSuccess` once the handler has answered 2xx.
 *
 * A route with `deferNonce` spends the nonce in its own write (`DbHandle.spendNonceAndInsert`: one
 * round trip and one commit instead of two; docs/decisions.md, "Signed writes"). The order stays
 * the spec's as seen from outside: every other ruling that could come after the nonce check (the
 * rate limit, an unparsable or invalid body, any error of the handler) first spends the nonce
 * (`DeferredNonce.settle`), so a replay is still answered nonce_reused; and a replay found by the
 * route's write gives back its rate-limit hit, as if it had been refused before being counted.
 */
import { createHmac, hash, timingSafeEqual } from 'node:crypto';
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
import { appendUsage, type UsageRow } from '../store/usage-log.js';
import { countRejection, requestAddress } from '../store/auth-rejections.js';
import type { NonceSpend } from '../store/nonces.js';
import type { DbHandle } from '../store/db.js';
import { takeJsonBody } from '../json.js';
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
    /** A `deferNonce` route's nonce, verified but not yet spent. */
    deferredNonce?: DeferredNonce;
  }
  interface FastifyContextConfig {
    /** The route is behind the NCS1 signature layer. */
    signed?: boolean;
    /** The route is GET /sdk/v1/logs: its own polling limit, and successful reads are not logged. */
    usageLogRead?: boolean;
    /**
     * The route spends the nonce in its own write (`req.deferredNonce`), and settles it first on any
     * other outcome (its JSON body is parsed here, so a body the parser would refuse settles it too).
     */
    deferNonce?: boolean;
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

const EMPTY = Buffer.alloc(0);

/**
 * Refused signatures one client address (an IPv6 /64 counts as one) may cause per minute before the
 * rest are answered 429 rate_limited (docs/decisions.md, "Authentication, rate limits and usage
 * log"): a client with a wrong secret or a skewed clock fails every call, and 60 a minute (one a
 * second, sustained) is far above what retries with backoff produce.
 */
export const FAILED_SIGNATURES_PER_MIN = 60;

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
};

export class SignatureLayer {
  readonly perKey = new RateLimiter(60_000);
  readonly logs = new RateLimiter(60_000);
  /** Refused signatures per client address (issue 19): past the limit, 429. */
  readonly failedByAddress = new RateLimiter(60_000);
  /** One `rate_limited` row per (address, known key) and window once the address is throttled. */
  readonly throttledRows = new RateLimiter(60_000);

  constructor(private readonly ctx: AppContext) {}

  /** Fastify preValidation hook for signed routes. */
  verify = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const now = this.ctx.clock.now();
    const keyId = header(req, 'x-key-id');
    const ts = header(req, 'x-timestamp');
    const nonce = header(req, 'x-nonce');
    const signature = header(req, 'x-signature');
    const logKey = keyId ? keyId.slice(0, 128) : null;

    // Before the key is looked up, a refusal is logged under the presented id only if it names a key.
    const early = async (code: UsageErrorCode): Promise<never> =>
      this.reject(req, reply, logKey && (await this.ctx.keys.get(logKey)) ? logKey : null, code);
    if (!keyId || !ts || !nonce || !signature) return early('missing_credentials');
    if (nonce.length < NONCE_MIN_LENGTH || nonce.length > NONCE_MAX_LENGTH) return early('invalid_nonce');
    if (!/^-?\d{1,15}$/.test(ts)) return early('invalid_timestamp');
    if (Math.abs(Number(ts) - now / 1000) > SIGNATURE_WINDOW_SEC) return early('timestamp_out_of_window');

    const key = await this.ctx.keys.get(keyId);
    if (!key) return this.reject(req, reply, null, 'unknown_key');
    if (key.status !== 'active') return this.reject(req, reply, key.id, 'key_disabled');
    if (key.expiresAt !== null && key.expiresAt <= now) return this.reject(req, reply, key.id, 'key_expired');

    // The signature covers the exact bytes received. This hook runs before JSON parsing, so the
    // bytes are still `req.body` (a Buffer from the catch-all parser in app.ts).
    const raw = Buffer.isBuffer(req.body) ? req.body : req.rawBody;
    if (!verifyNcs1(key.secretSha256, req.method, req.url, ts, nonce, raw, signature))
      return this.reject(req, reply, key.id, 'invalid_signature');

    const spend: NonceSpend = { keyId: key.id, nonce, now, ttlMs: 2 * SIGNATURE_WINDOW_SEC * 1000 };
    const config = req.routeOptions.config;
    const defer = config.deferNonce === true && !config.usageLogRead;
    if (!defer && !(await this.ctx.db.spendNonce(spend))) return this.reject(req, reply, key.id, 'nonce_reused');

    // CLARIFICATIONS 3: the per-key limit covers every signed path; the logs endpoint also has its own.
    let counted = false;
    if (key.rateLimitPerMin > 0) {
      const d = this.perKey.hit(key.id, key.rateLimitPerMin, now);
      if (!d.allowed) {
        // A refused hit is not counted; a deferred nonce is spent first (a replay is nonce_reused).
        if (defer && !(await this.ctx.db.spendNonce(spend))) return this.reject(req, reply, key.id, 'nonce_reused');
        return this.reject(req, reply, key.id, 'rate_limited', rateHeaders(d));
      }
      counted = true;
    }
    if (config.usageLogRead) {
      const d = this.logs.hit(key.id, LOGS_PER_MIN, now);
      if (!d.allowed) return this.reject(req, reply, key.id, 'rate_limited', rateHeaders(d));
    }
    req.auth = { key };
    if (defer) {
      req.deferredNonce = new DeferredNonce(this, this.ctx.db, req, spend, counted);
      // A body the JSON step will refuse (400) settles the nonce first: a replay is still nonce_reused.
      if (takeJsonBody(req) !== null) await req.deferredNonce.settle();
    }
  };

  /** A deferred nonce turned out to be spent already: give back the call's rate-limit hit and refuse it. */
  async replayed(req: FastifyRequest, spend: NonceSpend, counted: boolean): Promise<never> {
    if (counted) this.perKey.refund(spend.keyId, spend.now);
    return this.reject(req, undefined, spend.keyId, 'nonce_reused');
  }

  /**
   * Refuses the call. `keyId` is a known key's id, or null when none was presented or it names no
   * key: such refusals are counted per address and hour (store/auth-rejections.ts), not logged one
   * row each, since nobody could read the rows. Past FAILED_SIGNATURES_PER_MIN refusals from one
   * address in a minute, further ones are answered 429 (issue 19, defect 6).
   */
  private async reject(
    req: FastifyRequest,
    _reply: FastifyReply | undefined,
    keyId: string | null,
    code: UsageErrorCode,
    headers: Record<string, string> = {},
  ): Promise<never> {
    const db = this.ctx.db.db;
    const now = this.ctx.clock.now();
    // The per-key and log limits are rulings on a valid signature: only the key's holder reaches them.
    if (code !== 'rate_limited') {
      const address = requestAddress(req);
      const d = this.failedByAddress.hit(address, FAILED_SIGNATURES_PER_MIN, now);
      if (!d.allowed) {
        // A known key's owner sees one rate_limited row per address and window; the rest are counted.
        if (keyId && this.throttledRows.hit(`${address} ${keyId}`, 1, now).allowed)
          await appendUsage(db, keyId, this.row(req, 'rate_limited'));
        else await countRejection(db, { address, keyId, code: 'rate_limited', now });
        throw new ApiError('rate_limited', 'too many failed signatures from this address', rateHeaders(d));
      }
      if (!keyId) {
        await countRejection(db, { address, keyId: null, code, now });
        if (code === 'key_disabled') throw new ApiError('key_disabled', MESSAGES[code]);
        throw new ApiError('unauthorized', MESSAGES[code]);
      }
    }
    await appendUsage(db, keyId, this.row(req, code));
    if (code === 'rate_limited') throw new ApiError('rate_limited', MESSAGES[code], headers);
    if (code === 'key_disabled') throw new ApiError('key_disabled', MESSAGES[code]);
    throw new ApiError('unauthorized', MESSAGES[code]);
  }

  private row(req: FastifyRequest, code: UsageErrorCode): UsageRow {
    return {
      id: newLogId(),
      time: req.arrivedAt,
      endpoint: pathOnly(req.url),
      method: req.method,
      status: code === 'rate_limited' ? 'rate_limited' : 'unauthorized',
      latencyMs: Math.max(0, Math.round(this.ctx.clock.now() - req.arrivedAt)),
      requestId: String(req.id),
      error: MESSAGES[code],
      errorCode: code,
      qualityLevel: null,
    };
  }

  /** onSend hook: a 2xx answer to an authenticated call is a `success` row (not for log reads). */
  recordSuccess = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (!req.auth || req.usageRecorded || reply.statusCode >= 300 || req.routeOptions.config.usageLogRead) return;
    await appendUsage(
      this.ctx.db.db,
      req.auth.key.id,
      successRow(req, this.ctx.clock.now(), req.usageQualityLevel ?? null),
    );
  };
}

/**
 * The nonce of a `deferNonce` route, verified and not yet spent. The route either spends it with its
 * own rows (`DbHandle.spendNonceAndInsert`, then `stored`) or settles it before any other answer.
 */
export class DeferredNonce {
  private open = true;

  constructor(
    private readonly layer: SignatureLayer,
    private readonly db: DbHandle,
    private readonly req: FastifyRequest,
    readonly spend: NonceSpend,
    /** The call was counted by the per-key rate limiter. */
    private readonly counted: boolean,
  ) {}

  /**
   * The route's write came back: `fresh` false means the nonce was spent already, so the call is a
   * replay (nothing was stored): throws nonce_reused, as the check would have before the handler.
   */
  async stored(fresh: boolean): Promise<void> {
    this.open = false;
    if (!fresh) await this.layer.replayed(this.req, this.spend, this.counted);
  }

  /**
   * Spends the nonce now, before any answer other than the route's own write (a rate limit, a
   * validation error, an error of the handler, a write that failed and stored nothing): a replay
   * is refused as nonce_reused, which the spec ranks before all of these. Idempotent.
   */
  async settle(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    const s = this.spend;
    if (!(await this.db.spendNonce(s))) await this.layer.replayed(this.req, s, this.counted);
  }
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
  const expected = Buffer.from(ncs1Signature(secretSha256Hex, method, url, timestamp, nonce, body));
  const given = Buffer.from(signature);
  // Lengths are public (a SHA-256 signature is always 44 characters); the bytes compare in constant time.
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * The NCS1 `x-signature` for a request, from the key's stored hex digest (which is the HMAC key):
 * the verifier's half, and the signer of the demo backend's own calls (demo/backend.ts).
 */
export function ncs1Signature(
  secretSha256Hex: string,
  method: string,
  url: string,
  timestamp: string,
  nonce: string,
  body: Buffer | undefined,
): string {
  // One-shot digest: no Hash object per call.
  const bodyHash = hash('sha256', body ?? EMPTY, 'hex');
  const canonical = ['NCS1', method.toUpperCase(), pathOnly(url), timestamp, nonce, bodyHash].join('\n');
  return createHmac('sha256', secretSha256Hex).update(canonical).digest('base64');
}

export function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
