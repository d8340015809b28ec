/**
 * "The store cannot answer right now": the one classification of database and object-store
 * failures that a client should retry (docs/decisions.md, "Store outages"). The app answers them
 * 503 service_unavailable with Retry-After instead of 500 internal_error, which a client cannot
 * tell from a bug; the batch worker leaves the job to be claimed again instead of failing it.
 *
 * Only failures of the stores or the way to them count: a data error (a unique violation, a syntax
 * error, a bad value) is ours or the caller's and stays a 500 or whatever the route makes of it.
 */

/** A write refused at once because too many writes already wait (`maxQueued` in batcher.ts and group-commit.ts). */
export class StoreBusyError extends Error {
  readonly code = 'store_busy';
  constructor() {
    super('too many writes are waiting for the database');
    this.name = 'StoreBusyError';
  }
}

/**
 * PostgreSQL SQLSTATEs that mean the server is unable or unwilling right now: 57014 query_canceled
 * (statement_timeout), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now
 * (starting up, in recovery), 53300 too_many_connections, 25006 read_only_sql_transaction (a
 * write reached a standby, as just after a failover while connections still point at the old
 * primary's address), 53100 disk_full and 53200 out_of_memory (the server out of a resource an
 * operator restores; retrying later succeeds), and class 08 (connection exceptions).
 */
const SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '53300', '53100', '53200', '25006']);

/** Socket errors on the way to the database or the object store (Node's `code`). */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * S3 error names (ObjectStoreError's `code`) that mean "not now": throttling and the service's own
 * 503. Any other S3 error (access denied, no such bucket) is a configuration fault, not a blip.
 */
const S3_CODES = new Set(['SlowDown', 'ServiceUnavailable', 'RequestTimeout']);

/** pg's own messages for a connection it could not get, lost, or gave up on (they carry no code). */
const PG_MESSAGES: Array<[RegExp, string]> = [
  [/^timeout exceeded when trying to connect/, 'connect_timeout'],
  [/^Connection terminated/, 'connection_terminated'],
  [/^Query read timeout/, 'query_read_timeout'],
  [/is not queryable/, 'connection_terminated'],
];

/**
 * Why `err` means the store is unavailable, as a short token safe to log ("57014", "ECONNREFUSED",
 * "connect_timeout", "SQLITE_BUSY", ...), or undefined when it does not. Follows `cause` and the
 * members of an AggregateError (a host name resolving to several addresses fails with one).
 */
export function unavailableReason(err: unknown, depth = 0): string | undefined {
  if (err === null || typeof err !== 'object' || depth > 4) return undefined;
  if (err instanceof StoreBusyError) return err.code;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined) {
    if (SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return code;
    if (SOCKET_CODES.has(code)) return code;
    // The S3-compatible object store asking for less load or briefly unable to answer.
    if (S3_CODES.has(code)) return code;
    // better-sqlite3: the busy timeout ran out, or a table is locked; the disk is full, failed to
    // read or write, or memory ran out (extended codes included). A constraint or a bad statement
    // (SQLITE_CONSTRAINT, SQLITE_ERROR) is not the store's state and stays out.
    if (/^SQLITE_(BUSY|LOCKED|FULL|IOERR|NOMEM)/.test(code)) return code;
  }
  // pg's client-side failures are plain Errors; a database error with a code is judged above only.
  if (code === undefined && typeof e.message === 'string') {
    for (const [re, reason] of PG_MESSAGES) if (re.test(e.message)) return reason;
  }
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const r = unavailableReason(inner, depth + 1);
      if (r) return r;
    }
  }
  return unavailableReason(e.cause, depth + 1);
}

export function isStoreUnavailable(err: unknown): boolean {
  return unavailableReason(err) !== undefined;
}
