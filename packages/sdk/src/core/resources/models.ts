import type { HttpClient } from '../http/transport.js';

/** `POST /sdk/v1/models/grant` body (docs/decisions.md "Model grants"): all optional. */
export interface ModelGrantInput {
  /** The page's exact origin (`https://app.example.com`); the grant then works only there. */
  origin?: string;
  /** Lifetime, 30..900 s (default 300). */
  ttlSec?: number;
}

/** What a page needs to fetch the model bundle (hand it to `@vitals/capture`). */
export interface ModelGrantInfo {
  grant: string;
  expiresAt: number;
  modelsVersion: string;
  origin?: string;
  manifestUrl: string;
}

/** `/sdk/v1/models/grant`: a short-lived grant for one browser, minted by a backend holding the key. */
export class Models {
  constructor(private readonly http: HttpClient) {}

  /**
   * Mints a model grant for the on-device capture. Give the page only the returned object.
   * @example res.json(await vitals.models.grant({ origin: 'https://app.example.com' }))
   */
  async grant(input: ModelGrantInput = {}, opts: { signal?: AbortSignal } = {}): Promise<ModelGrantInfo> {
    const res = await this.http.request<ModelGrantInfo>('POST', '/sdk/v1/models/grant', {
      json: input,
      signal: opts.signal,
    });
    return res.data;
  }
}
