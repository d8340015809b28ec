import type { HttpClient } from '../http/transport.js';
import { segment } from '../http/path.js';
import type { Measurement, MeasurementInput } from '../types.js';

/** `/sdk/v1/measurements`: on-device results in, stored measurements out. */
export class Measurements {
  constructor(
    private readonly http: HttpClient,
    private readonly sdkVersion: string | undefined,
  ) {}

  /**
   * Stores an on-device measurement. Every field (including `sdkVersion`) is in the body before it
   * is signed; `advanced: true` persists and returns the raw block.
   * @example await client.measurements.create({ source: 'web', durationSec: 30, quality: {...} })
   */
  async create(body: MeasurementInput, opts: { advanced?: boolean; signal?: AbortSignal } = {}): Promise<Measurement> {
    const json = this.sdkVersion && body.sdkVersion === undefined ? { ...body, sdkVersion: this.sdkVersion } : body;
    const res = await this.http.request<Measurement>('POST', '/sdk/v1/measurements', {
      json,
      query: { advanced: opts.advanced ? 'true' : undefined },
      signal: opts.signal,
    });
    return res.data;
  }

  /** One stored measurement; a foreign or unknown id is a plain 404 (`ApiError`, status 404). */
  async get(
    id: string,
    opts: { advanced?: boolean; include?: 'assessment' | string; signal?: AbortSignal } = {},
  ): Promise<Measurement> {
    const res = await this.http.request<Measurement>('GET', `/sdk/v1/measurements/${segment(id)}`, {
      query: { advanced: opts.advanced ? 'true' : undefined, include: opts.include },
      signal: opts.signal,
      idempotent: true,
    });
    return res.data;
  }
}
