/**
 * Errors of the SDK. `ApiError` is rebuilt from the spec's failure envelope
 * (`{ok:false, error:{code, message}}`) and carries the HTTP status and `X-Request-Id`; branch on
 * `code`, never on `message`. The other classes cover what never reached an envelope.
 */
import { isErrorCode, type ErrorCode } from '@vitals/protocol';

/** Base class: every error the SDK throws on purpose has a stable `code`. */
export class VitalsError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VitalsError';
    this.code = code;
  }
}

/** A refusal by the service, built from its envelope. */
export class ApiError extends VitalsError {
  readonly status: number;
  readonly requestId: string | undefined;
  /** Seconds to wait before trying again: `RateLimit-Reset` on 429, `Retry-After` on 503. */
  readonly retryAfterSec: number | undefined;
  constructor(init: { code: string; message: string; status: number; requestId?: string; retryAfterSec?: number }) {
    super(init.code, init.message);
    this.name = 'ApiError';
    this.status = init.status;
    this.requestId = init.requestId;
    this.retryAfterSec = init.retryAfterSec;
  }

  /** True when `code` is one of the spec's HTTP error codes (protocol `ERROR_STATUS`). */
  get isKnownCode(): boolean {
    return isErrorCode(this.code);
  }

  is(code: ErrorCode): boolean {
    return this.code === code;
  }
}

/** The request never produced a response (DNS, refused connection, reset, abort). */
export class NetworkError extends VitalsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('network_error', message, options);
    this.name = 'NetworkError';
  }
}

/** `jobs.wait` (or a session result wait) ran out of time before a terminal status. */
export class WaitTimeoutError extends VitalsError {
  /** The last job state seen, if any. */
  readonly last: unknown;
  constructor(message: string, last?: unknown) {
    super('wait_timeout', message);
    this.name = 'WaitTimeoutError';
    this.last = last;
  }
}

/** A fatal streaming `error` event, or a session that ended without a result. */
export class StreamError extends VitalsError {
  readonly fatal: boolean;
  constructor(code: string, message: string, fatal = true) {
    super(code, message);
    this.name = 'StreamError';
    this.fatal = fatal;
  }
}

/**
 * A refusal that says "not now" rather than "no": `rate_limited`, or `service_unavailable` (the
 * service's database is away). Loops that poll (jobs.wait, logs follow) slow down on these instead
 * of ending; each request has already been retried by the transport.
 */
export function isTransient(err: unknown): err is ApiError {
  return err instanceof ApiError && (err.code === 'rate_limited' || err.code === 'service_unavailable');
}

/**
 * Fallback code when a failure response carries no envelope (a proxy, a load balancer, a server
 * that is restarting). A bare 503 says only "not now", so it is `service_unavailable` (retryable),
 * not `cloud_unavailable`, which the service sends itself when cloud inference is unavailable.
 */
export function codeForStatus(status: number): string {
  if (status === 401) return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status === 413) return 'payload_too_large';
  if (status === 429) return 'rate_limited';
  if (status === 503) return 'service_unavailable';
  if (status >= 500) return 'internal_error';
  return 'http_error';
}
