/**
 * The session's batch fallback, authorized by the session token (not NCS1):
 * `POST /sdk/v1/cloud/sessions/:id/frames` (raw frames file) answers the job that supersedes the
 * session; `GET /sdk/v1/cloud/sessions/:id/result` answers that job's current state
 * (CLARIFICATIONS 24). Limits: 6 uploads per 10 minutes, 60 result polls a minute per session.
 */
import { FALLBACK_RESULT_PER_MIN } from '@vitals/protocol';
import type { HttpClient, Sleep } from '../http/transport.js';
import { segment } from '../http/path.js';
import { pollUntilTerminal, type WaitOptions } from '../resources/jobs.js';
import type { Clock } from '../clock.js';
import { ApiError, NetworkError, StreamError } from '../errors.js';
import type { FramesWriter } from '../frames/frames-file.js';
import type { CloudJob } from '../types.js';
import type { FinalEvent } from './events.js';

export const FALLBACK_MIN_POLL_MS = Math.ceil(60_000 / FALLBACK_RESULT_PER_MIN);

export class SessionFallback {
  constructor(
    private readonly http: HttpClient,
    private readonly sessionId: string,
    private readonly deps: { sleep: Sleep; clock: Clock },
  ) {}

  async uploadFrames(file: Uint8Array, signal?: AbortSignal): Promise<CloudJob> {
    const res = await this.http.request<CloudJob>('POST', `/sdk/v1/cloud/sessions/${segment(this.sessionId)}/frames`, {
      raw: { bytes: file, contentType: 'application/octet-stream' },
      signal,
    });
    return res.data;
  }

  now(): number {
    return this.deps.clock();
  }

  /**
   * The upload, tried again until `deadline` while the service cannot take it: no connection (the
   * server restarting, found by `npm run soak`, issue 19), a cut connection, 429 or a 5xx. Safe to
   * repeat: the service answers the same bytes again with the job it created (CLARIFICATIONS 24).
   * A 5xx or 429 counts against the endpoint's 6 uploads per 10 minutes, so those stop after 4.
   */
  async uploadFramesUntil(file: Uint8Array, deadline: number): Promise<CloudJob> {
    let refusals = 0;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.uploadFrames(file);
      } catch (err) {
        const refused = err instanceof ApiError && (err.status === 429 || err.status >= 500);
        if (!(err instanceof NetworkError) && !refused) throw err;
        if (refused && ++refusals > 4) throw err;
        const delay = Math.min(8_000, 1_000 * 2 ** attempt);
        if (this.now() + delay > deadline) throw err;
        await this.deps.sleep(delay);
      }
    }
  }

  async result(signal?: AbortSignal): Promise<CloudJob> {
    const res = await this.http.request<CloudJob>('GET', `/sdk/v1/cloud/sessions/${segment(this.sessionId)}/result`, {
      signal,
      idempotent: true,
    });
    return res.data;
  }

  async waitResult(opts: WaitOptions = {}): Promise<CloudJob> {
    const intervalMs = Math.max(FALLBACK_MIN_POLL_MS, opts.intervalMs ?? 2_000);
    return pollUntilTerminal(
      () => this.result(opts.signal),
      this.deps,
      { ...opts, intervalMs },
      `session ${this.sessionId}`,
    );
  }
}

/**
 * Uploads the session's local buffer (a frames file lasting `durationMicros`) and waits for the
 * superseding job; its measurement becomes the session's `final` (`via: 'batch'`).
 */
export async function deliverFrames(
  fallback: SessionFallback,
  buffer: FramesWriter,
  durationMicros: number,
  wait: { timeoutMs: number; intervalMs: number | undefined },
): Promise<FinalEvent> {
  buffer.durationMicros = durationMicros;
  const deadline = fallback.now() + wait.timeoutMs;
  const created = await fallback.uploadFramesUntil(buffer.toBytes(), deadline);
  const job = await fallback.waitResult({ ...wait, timeoutMs: Math.max(1, deadline - fallback.now()) });
  return finalFromJob(job, created);
}

function finalFromJob(job: CloudJob, created: CloudJob): FinalEvent {
  if (job.status === 'completed' && job.measurement) {
    return {
      t: 'final',
      measurementId: job.measurementId ?? job.measurement.id,
      measurement: job.measurement,
      via: 'batch',
      job,
    };
  }
  const code = job.error?.code ?? job.status;
  throw new StreamError(code, job.error?.message ?? `fallback job ${job.jobId ?? created.jobId} ended ${job.status}`);
}
