import type { HttpClient } from '../http/transport.js';
import { segment } from '../http/path.js';
import { VitalsError } from '../errors.js';
import type { Measurement, MeasurementInput } from '../types.js';

/** The fields of an on-device result a backend passes on (spec: POST /sdk/v1/measurements body). */
const ON_DEVICE_FIELDS = [
  'durationSec',
  'isComplete',
  'sdkVersion',
  'modelsVersion',
  'quality',
  'cardiac',
  'hrv',
  'respiratory',
  'stress',
  'bloodPressure',
  'spo2',
  'raw',
] as const;

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

  /**
   * Stores the result an on-device capture (`@vitals/capture`) handed to the page, as received:
   * the one line a backend needs. Only the submission fields are sent (`origin`/`attested` are the
   * server's); `userRef` is the backend's own (a page cannot pick whose history it lands in).
   * @example app.post('/api/measurements', async (req, res) => res.json(await vitals.measurements.submitOnDevice(req.body, { userRef: req.user.ref })))
   */
  submitOnDevice(
    result: unknown,
    opts: { userRef?: string; advanced?: boolean; signal?: AbortSignal } = {},
  ): Promise<Measurement> {
    if (typeof result !== 'object' || result === null || Array.isArray(result))
      throw new VitalsError('invalid_result', 'submitOnDevice: the result must be an object');
    const r = result as Record<string, unknown>;
    const body: Record<string, unknown> = { source: r.source ?? 'web' };
    for (const k of ON_DEVICE_FIELDS) if (r[k] !== undefined) body[k] = r[k];
    if (opts.userRef !== undefined) body.userRef = opts.userRef;
    return this.create(body as MeasurementInput, { advanced: opts.advanced, signal: opts.signal });
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
