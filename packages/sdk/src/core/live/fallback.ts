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
import { StreamError } from '../errors.js';
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
  const created = await fallback.uploadFrames(buffer.toBytes());
  const job = await fallback.waitResult(wait);
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
