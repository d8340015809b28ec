/**
 * Errors of the S3-compatible object store (s3-store.ts): SDK errors become ObjectStoreError with
 * the operation, the S3 error name and HTTP status, never a credential.
 */

/**
 * A failure of the S3-compatible store (network, permissions, missing bucket, server error). It
 * keeps the S3 error's name (or a socket error's code) and HTTP status only: the SDK's error
 * carries the raw request and response (with the Authorization header), so it is not attached as
 * `cause`.
 */
export class ObjectStoreError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ObjectStoreError';
  }
}

export interface SdkError {
  name?: string;
  message?: string;
  $retryable?: unknown;
  $metadata?: { httpStatusCode?: number };
}

export const statusOf = (err: unknown): number | undefined => (err as SdkError | null)?.$metadata?.httpStatusCode;

/** A missing key (not a missing bucket, which is a configuration fault). */
export function isMissing(err: unknown): boolean {
  const name = (err as SdkError | null)?.name;
  if (name === 'NoSuchBucket') return false;
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(err) === 404;
}

export function wrap(op: string, err: unknown): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  const e = (err ?? {}) as SdkError;
  const status = statusOf(err);
  const what = [e.name, status ? `HTTP ${status}` : undefined].filter(Boolean).join(', ');
  const msg = typeof e.message === 'string' && e.message && e.message !== e.name ? `: ${e.message.slice(0, 200)}` : '';
  // A socket failure keeps its code (ECONNREFUSED, ...): the store is away, which the app answers
  // 503 and the batch worker retries (store/unavailable.ts); otherwise the S3 error's name.
  const socket = (err as { code?: unknown } | null)?.code;
  const code = typeof socket === 'string' && /^E[A-Z_]+$/.test(socket) ? socket : e.name;
  return new ObjectStoreError(`object store: ${op} failed${what ? ` (${what})` : ''}${msg}`, code, status);
}
