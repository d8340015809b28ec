import type { HttpClient } from '../http/transport.js';
import { segment } from '../http/path.js';
import type { Baseline, Measurement, Page, UserSummary } from '../types.js';

export interface PageQuery {
  page?: number;
  perPage?: number;
  signal?: AbortSignal;
}

export interface UserHistoryQuery extends PageQuery {
  /** Epoch ms bounds. */
  from?: number;
  to?: number;
  include?: 'assessment' | string;
}

/** Accepts `{items, total}` or a bare array (the users list envelope is "not shown" in the spec). */
function asPage<T>(data: unknown): Page<T> {
  if (Array.isArray(data)) return { items: data as T[], total: data.length };
  return data as Page<T>;
}

/** `/sdk/v1/users`: end users seen by this key (history is scoped to the key). */
export class Users {
  constructor(private readonly http: HttpClient) {}

  async list(q: PageQuery = {}): Promise<Page<UserSummary>> {
    const res = await this.http.request<unknown>('GET', '/sdk/v1/users', {
      query: { page: q.page, perPage: q.perPage },
      signal: q.signal,
      idempotent: true,
    });
    return asPage<UserSummary>(res.data);
  }

  /** A user's measurements, newest first. */
  async measurements(ref: string, q: UserHistoryQuery = {}): Promise<Page<Measurement>> {
    const res = await this.http.request<unknown>('GET', `/sdk/v1/users/${segment(ref)}/measurements`, {
      query: { page: q.page, perPage: q.perPage, from: q.from, to: q.to, include: q.include },
      signal: q.signal,
      idempotent: true,
    });
    return asPage<Measurement>(res.data);
  }

  /** Median +/- 2 MAD corridor over the last 30 days (informational, not a medical norm). */
  async baseline(ref: string, opts: { signal?: AbortSignal } = {}): Promise<Baseline> {
    const res = await this.http.request<Baseline>('GET', `/sdk/v1/users/${segment(ref)}/baseline`, {
      signal: opts.signal,
      idempotent: true,
    });
    return res.data;
  }
}
