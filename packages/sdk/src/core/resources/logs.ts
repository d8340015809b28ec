import { LOGS_PER_MIN } from '@vitals/protocol';
import { isTransient } from '../errors.js';
import type { HttpClient, Sleep } from '../http/transport.js';
import type { Clock } from '../clock.js';
import type { LogsPage, UsageLogRow } from '../types.js';

export interface LogsQuery {
  /** 1..200, default 50 on the server. */
  limit?: number;
  /** Epoch ms: rows at or after it. */
  sinceTime?: number;
  /** `nextCursor` of a previous page (`<time>.<id>`); wins over `sinceTime`. */
  cursor?: string;
  signal?: AbortSignal;
}

export interface LogsIterateOptions extends LogsQuery {
  /** Keep polling after catching up (a tail). Default false: stop at the first short page. */
  follow?: boolean;
  /**
   * Minimum spacing between two requests. The endpoint allows 60 a minute per key, so this never
   * goes below 1000 ms.
   */
  intervalMs?: number;
  /** Called with each page's cursor, so a caller can persist where it is. */
  onCursor?: (cursor: string) => void;
}

/** Minimum spacing that keeps one poller inside the 60-per-minute logs limit. */
export const LOGS_MIN_INTERVAL_MS = Math.ceil(60_000 / LOGS_PER_MIN);

/** `/sdk/v1/logs`: the key's usage log, oldest first, keyset-paged by `(time, id)`. */
export class Logs {
  constructor(
    private readonly http: HttpClient,
    private readonly sleep: Sleep,
    private readonly clock: Clock,
  ) {}

  async list(q: LogsQuery = {}): Promise<LogsPage> {
    const res = await this.http.request<LogsPage>('GET', '/sdk/v1/logs', {
      query: { limit: q.limit, sinceTime: q.sinceTime, cursor: q.cursor },
      signal: q.signal,
      idempotent: true,
    });
    return res.data;
  }

  /**
   * Every row from `cursor` (or `sinceTime`) on, following `nextCursor`. With `follow`, it never
   * ends: it waits `intervalMs` between polls and backs off on `rate_limited` as `RateLimit-Reset`
   * says (on `service_unavailable` as `Retry-After` says). Stop it with `break` or the `signal`.
   * @example for await (const row of client.logs.iterate({ sinceTime: Date.now() - 3600_000 })) console.log(row)
   */
  async *iterate(opts: LogsIterateOptions = {}): AsyncGenerator<UsageLogRow, void, undefined> {
    const interval = Math.max(LOGS_MIN_INTERVAL_MS, opts.intervalMs ?? LOGS_MIN_INTERVAL_MS);
    let cursor = opts.cursor;
    let lastRequestAt = -Infinity;
    for (;;) {
      const wait = lastRequestAt + interval - this.clock();
      if (wait > 0) await this.sleep(wait, opts.signal);
      lastRequestAt = this.clock();
      let page: LogsPage;
      try {
        page = await this.list({
          limit: opts.limit,
          sinceTime: cursor ? undefined : opts.sinceTime,
          cursor,
          signal: opts.signal,
        });
      } catch (err) {
        if (opts.follow && isTransient(err)) {
          await this.sleep(Math.max(interval, (err.retryAfterSec ?? 1) * 1000), opts.signal);
          continue;
        }
        throw err;
      }
      for (const row of page.items) yield row;
      if (page.nextCursor) {
        cursor = page.nextCursor;
        opts.onCursor?.(cursor);
      }
      const full = opts.limit !== undefined ? page.items.length >= opts.limit : page.items.length > 0;
      if (!opts.follow && !full) return;
    }
  }
}
