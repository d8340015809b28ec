import type { HttpClient } from '../http/transport.js';
import type { CreateSessionInput, SessionInfo } from '../types.js';

/** `/sdk/v1/cloud/sessions`: minted by a backend holding the key, handed to a page as a token. */
export class Sessions {
  constructor(private readonly http: HttpClient) {}

  /**
   * Mints a streaming session. Give the page only the returned object (token, id, wsUrl): never
   * the key secret.
   * @example const s = await client.sessions.create({ platform: 'web', durationSec: 30, consent: true })
   */
  async create(input: CreateSessionInput, opts: { signal?: AbortSignal } = {}): Promise<SessionInfo> {
    const res = await this.http.request<SessionInfo>('POST', '/sdk/v1/cloud/sessions', {
      json: input,
      signal: opts.signal,
    });
    return res.data;
  }
}
