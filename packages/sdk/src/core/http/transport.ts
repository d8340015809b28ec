/**
 * The one place requests are made: NCS1 signing over WebCrypto, the envelope, `ApiError`,
 * retries and the passive clock check. Every resource goes through `HttpClient.request`.
 */
import { randomHex, signRequest } from '@vitals/protocol';
import { ApiError, NetworkError, codeForStatus } from '../errors.js';
import { ClockWatch, type Clock, type Logger } from '../clock.js';
import { DEFAULT_RETRY, isRetryableStatus, parseResetSeconds, retryDelayMs, type RetryPolicy } from './retry.js';
import { joinUrl, queryString, type QueryValue } from './path.js';

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** How a request proves itself: NCS1 with the key, a session token, or nothing (public). */
export type Auth =
  { kind: 'ncs1'; keyId: string; secret: string } | { kind: 'bearer'; token: string } | { kind: 'none' };

export interface HttpConfig {
  baseUrl: string;
  fetch: FetchLike;
  clock: Clock;
  logger: Logger;
  retry: RetryPolicy;
  sleep: Sleep;
  random: () => number;
  clockWatch: ClockWatch;
  /** Extra headers on every call (for example a user agent in Node). */
  headers?: Record<string, string>;
}

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  /** A JSON body (serialized once; the serialized bytes are signed and sent) or raw bytes. */
  json?: unknown;
  raw?: { bytes: Uint8Array; contentType: string };
  signal?: AbortSignal;
  /** Retry network failures too: only for reads, where a repeat cannot store twice. */
  idempotent?: boolean;
}

export interface ApiResponse<T> {
  data: T;
  status: number;
  requestId: string | undefined;
  headers: Headers;
}

export const defaultSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export function resolveHttpConfig(partial: Partial<HttpConfig> & { baseUrl: string }): HttpConfig {
  const logger = partial.logger ?? { warn: (m: string) => console.warn(`[vitals] ${m}`) };
  return Object.freeze({
    baseUrl: partial.baseUrl,
    fetch: partial.fetch ?? ((input: string | URL, init?: RequestInit) => globalThis.fetch(input, init)),
    clock: partial.clock ?? (() => Date.now()),
    logger,
    retry: { ...DEFAULT_RETRY, ...partial.retry },
    sleep: partial.sleep ?? defaultSleep,
    random: partial.random ?? Math.random,
    clockWatch: partial.clockWatch ?? new ClockWatch(logger),
    headers: partial.headers,
  });
}

export class HttpClient {
  constructor(
    readonly config: HttpConfig,
    private readonly auth: Auth,
  ) {}

  /** Same transport, another credential (the session fallback uses the session token). */
  withAuth(auth: Auth): HttpClient {
    return new HttpClient(this.config, auth);
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const url = joinUrl(this.config.baseUrl, path + queryString(opts.query));
    const { bytes, contentType } = encodeBody(opts);
    for (let attempt = 0; ; attempt++) {
      const sentAt = this.config.clock();
      let res: Response;
      try {
        // Signed afresh on every attempt: a nonce is single-use (spec: Authentication rule 2).
        const headers = await this.headersFor(method, url.pathname, bytes, contentType, sentAt);
        res = await this.config.fetch(url, {
          method,
          headers,
          body: bytes as BodyInit | undefined,
          signal: opts.signal,
        });
      } catch (err) {
        if (opts.signal?.aborted) throw err;
        if (opts.idempotent && attempt < this.config.retry.maxRetries) {
          await this.config.sleep(
            retryDelayMs(this.config.retry, attempt, undefined, this.config.random)!,
            opts.signal,
          );
          continue;
        }
        throw new NetworkError(`${method} ${url.pathname} failed: ${messageOf(err)}`, { cause: err });
      }
      this.observeDate(res, sentAt);
      if (isRetryableStatus(res.status) && attempt < this.config.retry.maxRetries) {
        // 429: RateLimit-Reset, waited for up to maxResetWaitMs; 503: Retry-After (the service's
        // database is away for a moment), waited for up to one backoff step's ceiling.
        const limited = res.status === 429;
        const wait = parseResetSeconds(res.headers.get(limited ? 'ratelimit-reset' : 'retry-after'));
        const policy = this.config.retry;
        const delay = retryDelayMs(
          policy,
          attempt,
          wait,
          this.config.random,
          limited ? policy.maxResetWaitMs : policy.maxDelayMs,
        );
        if (delay !== undefined) {
          await res.body?.cancel().catch(() => undefined);
          this.config.logger.debug?.(`${method} ${url.pathname}: ${res.status}, retry in ${delay} ms`);
          await this.config.sleep(delay, opts.signal);
          continue;
        }
      }
      return parseResponse<T>(res);
    }
  }

  private async headersFor(
    method: string,
    pathname: string,
    bytes: Uint8Array | undefined,
    contentType: string | undefined,
    nowMs: number,
  ): Promise<Record<string, string>> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.config.headers };
    if (contentType) headers['content-type'] = contentType;
    if (this.auth.kind === 'ncs1') {
      const signed = await signRequest({
        keyId: this.auth.keyId,
        secret: this.auth.secret,
        method,
        path: pathname,
        body: bytes,
        timestamp: Math.floor(nowMs / 1000),
        nonce: randomHex(16),
      });
      Object.assign(headers, signed);
    } else if (this.auth.kind === 'bearer') {
      headers.authorization = `Bearer ${this.auth.token}`;
    }
    return headers;
  }

  private observeDate(res: Response, sentAt: number): void {
    const date = res.headers.get('date');
    if (!date) return;
    const serverMs = Date.parse(date);
    if (Number.isNaN(serverMs)) return;
    // The Date header has one-second resolution (it truncates), hence the added 1000 ms.
    this.config.clockWatch.observe(serverMs + 500, sentAt, this.config.clock(), 1000);
  }
}

function encodeBody(opts: RequestOptions): { bytes: Uint8Array | undefined; contentType: string | undefined } {
  if (opts.raw) return { bytes: opts.raw.bytes, contentType: opts.raw.contentType };
  if (opts.json === undefined) return { bytes: undefined, contentType: undefined };
  return { bytes: new TextEncoder().encode(JSON.stringify(opts.json)), contentType: 'application/json' };
}

async function parseResponse<T>(res: Response): Promise<ApiResponse<T>> {
  const requestId = res.headers.get('x-request-id') ?? undefined;
  const text = await res.text();
  let body: unknown = undefined;
  if (text.length > 0) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  const envelope = body as { ok?: unknown; data?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
  if (res.ok && envelope?.ok !== false) {
    // Success envelope `{ok:true, data}`; a bare object is accepted too (spec: users list "not shown").
    const data = envelope && envelope.ok === true && 'data' in envelope ? envelope.data : body;
    return { data: data as T, status: res.status, requestId, headers: res.headers };
  }
  const code = typeof envelope?.error?.code === 'string' ? envelope.error.code : codeForStatus(res.status);
  const message =
    typeof envelope?.error?.message === 'string'
      ? envelope.error.message
      : `HTTP ${res.status} ${res.statusText}`.trim();
  throw new ApiError({
    code,
    message,
    status: res.status,
    requestId,
    retryAfterSec: parseResetSeconds(res.headers.get('ratelimit-reset') ?? res.headers.get('retry-after')),
  });
}

function messageOf(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}
