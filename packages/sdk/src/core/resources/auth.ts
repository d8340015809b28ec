import { serverClockOf, type ClockWatch, type DriftReport, type Clock } from '../clock.js';
import type { HttpClient } from '../http/transport.js';
import type { AuthTestResult } from '../types.js';

/** `POST /sdk/v1/auth/test`: verifies the signature and returns the key's facts. */
export class Auth {
  constructor(
    private readonly http: HttpClient,
    private readonly clock: Clock,
    private readonly clockWatch: ClockWatch,
  ) {}

  /**
   * The key's facts (id, status, mode, features, limits, quotas, balance, organization, server
   * clock). Also checks the local clock against the server's, warning past 30 s of drift.
   */
  async test(opts: { signal?: AbortSignal } = {}): Promise<AuthTestResult & { clockDrift?: DriftReport }> {
    const sentAt = this.clock();
    const res = await this.http.request<AuthTestResult>('POST', '/sdk/v1/auth/test', { json: {}, signal: opts.signal });
    const receivedAt = this.clock();
    const serverMs = res.data && typeof res.data === 'object' ? serverClockOf(res.data) : undefined;
    if (serverMs === undefined) return res.data;
    const drift = this.clockWatch.observe(serverMs, sentAt, receivedAt);
    Object.defineProperty(res.data, 'clockDrift', { value: drift, enumerable: false });
    return res.data as AuthTestResult & { clockDrift?: DriftReport };
  }
}
