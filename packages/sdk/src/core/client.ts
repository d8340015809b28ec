/**
 * `VitalsClient`: the signed client for every `/sdk/v1` endpoint. It holds the key secret, so it
 * belongs on a server (spec: Authentication rule 4); a page streams with `StreamSession` and a
 * session token instead.
 */
import { ClockWatch, consoleLogger, type Clock, type DriftReport, type Logger } from './clock.js';
import { HttpClient, resolveHttpConfig, type FetchLike, type Sleep } from './http/transport.js';
import type { RetryPolicy } from './http/retry.js';
import { defaultUploader, fetchUploader, type Uploader } from './http/upload.js';
import { Auth } from './resources/auth.js';
import { Jobs } from './resources/jobs.js';
import { Logs } from './resources/logs.js';
import { Measurements } from './resources/measurements.js';
import { Models } from './resources/models.js';
import { Sessions } from './resources/sessions.js';
import { Uploads } from './resources/uploads.js';
import { Users } from './resources/users.js';
import { VitalsError } from './errors.js';

export interface VitalsClientOptions {
  keyId: string;
  secret: string;
  /** For example `https://vitals.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** Epoch milliseconds; the NCS1 timestamp comes from it. Defaults to `Date.now`. */
  clock?: Clock;
  /** Receives warnings (clock drift). Defaults to `console.warn`. */
  logger?: Logger;
  retry?: Partial<RetryPolicy>;
  /** Waits between retries and polls; inject to test without real time. */
  sleep?: Sleep;
  /** Performs the presigned PUT; the Node entry supplies one with streaming and progress. */
  uploader?: Uploader;
  /** Added to submitted measurements that carry no `sdkVersion` (before signing). */
  sdkVersion?: string;
  /** Extra headers on every API call. */
  headers?: Record<string, string>;
}

export class VitalsClient {
  readonly measurements: Measurements;
  readonly users: Users;
  readonly logs: Logs;
  readonly uploads: Uploads;
  readonly jobs: Jobs;
  readonly sessions: Sessions;
  /** Model grants for the on-device browser capture. */
  readonly models: Models;
  readonly auth: Auth;
  /** The transport, for advanced use (custom endpoints with the same signing and retries). */
  readonly http: HttpClient;
  private readonly clockWatch: ClockWatch;

  constructor(opts: VitalsClientOptions) {
    for (const name of ['keyId', 'secret', 'baseUrl'] as const) {
      if (typeof opts[name] !== 'string' || opts[name].length === 0) {
        throw new VitalsError('config_error', `VitalsClient: ${name} is required`);
      }
    }
    const logger = opts.logger ?? consoleLogger;
    this.clockWatch = new ClockWatch(logger);
    const config = resolveHttpConfig({
      baseUrl: opts.baseUrl,
      fetch: opts.fetch,
      clock: opts.clock,
      logger,
      retry: opts.retry as RetryPolicy | undefined,
      sleep: opts.sleep,
      clockWatch: this.clockWatch,
      headers: opts.headers,
    });
    this.http = new HttpClient(config, { kind: 'ncs1', keyId: opts.keyId, secret: opts.secret });
    const deps = { sleep: config.sleep, clock: config.clock };
    // An injected fetch covers uploads too, unless an uploader is given explicitly.
    const uploader = opts.uploader ?? (opts.fetch ? fetchUploader : defaultUploader);
    this.measurements = new Measurements(this.http, opts.sdkVersion);
    this.users = new Users(this.http);
    this.logs = new Logs(this.http, config.sleep, config.clock);
    this.uploads = new Uploads(this.http, uploader, config.fetch);
    this.jobs = new Jobs(this.http, this.uploads, deps);
    this.sessions = new Sessions(this.http);
    this.models = new Models(this.http);
    this.auth = new Auth(this.http, config.clock, this.clockWatch);
  }

  /** Calls `auth.test` and returns the measured drift (server minus local clock). */
  async checkClock(): Promise<DriftReport | undefined> {
    const facts = await this.auth.test();
    return facts.clockDrift ?? this.clockWatch.last;
  }

  /** The latest drift estimate from any response, if one was observed. */
  get lastClockDrift(): DriftReport | undefined {
    return this.clockWatch.last;
  }
}
