import { sha256Hex } from '@vitals/protocol';
import { WaitTimeoutError, isTransient } from '../errors.js';
import type { HttpClient, Sleep } from '../http/transport.js';
import { segment } from '../http/path.js';
import type { UploadBody, UploadProgress } from '../http/upload.js';
import type { Clock } from '../clock.js';
import { isTerminalStatus, type CloudJob, type CreateJobInput } from '../types.js';
import type { Uploads } from './uploads.js';

export interface WaitOptions {
  /** Give up after this long (`WaitTimeoutError`). Default 10 minutes. */
  timeoutMs?: number;
  /**
   * Pause between polls. Default 1000 ms; at most END_POLL_MS once the job reports its last stages
   * (`stats.progress`: estimating, emotion and gaze, or the video followed to its last 5 %).
   */
  intervalMs?: number;
  /** Sees every polled state, terminal included. */
  onPoll?: (job: CloudJob) => void;
  signal?: AbortSignal;
}

export interface SubmitInput extends Omit<CreateJobInput, 'objectKey' | 'sha256' | 'idempotencyKey'> {
  body: UploadBody;
  contentType?: string;
  /** Hex SHA-256 of the body; computed when the body is bytes. */
  sha256?: string;
  /** Default: `sdk-<sha256>`, so the same file is never charged twice. */
  idempotencyKey?: string;
  onProgress?: (p: UploadProgress) => void;
  signal?: AbortSignal;
}

/** The pause between polls once a job is near its end (a settled job is seen within it). */
export const END_POLL_MS = 250;

/** Whether a running job's progress says it is in its last stages (seconds from settling). */
function nearTheEnd(job: { status: string }): boolean {
  const p = (job as { stats?: { progress?: { stage?: unknown; fraction?: unknown } } }).stats?.progress;
  if (job.status !== 'running' || !p) return false;
  if (p.stage === 'estimating' || p.stage === 'aux') return true;
  return p.stage === 'decoding' && typeof p.fraction === 'number' && p.fraction >= 0.95;
}

/** Polls a job (or a session's job) until a terminal status; shared by jobs and streaming. */
export async function pollUntilTerminal<T extends { status: string }>(
  fetchOnce: () => Promise<T>,
  deps: { sleep: Sleep; clock: Clock },
  opts: WaitOptions & { onPoll?: (job: T) => void },
  what: string,
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 600_000;
  // A poll is one signed GET (well under a millisecond of the server's CPU); every second, a settled
  // job is seen half a second sooner on average than at the earlier 2 s.
  const intervalMs = opts.intervalMs ?? 1_000;
  const deadline = deps.clock() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    try {
      last = await fetchOnce();
      opts.onPoll?.(last);
      if (isTerminalStatus(last.status)) return last;
    } catch (err) {
      // A rate limit or a database blip outlasting the retries is a reason to slow down, not to give up.
      if (!isTransient(err)) throw err;
      const backoff = Math.max(intervalMs, (err.retryAfterSec ?? 1) * 1000);
      if (deps.clock() + backoff > deadline)
        throw new WaitTimeoutError(`${what} did not settle in ${timeoutMs} ms`, last);
      await deps.sleep(backoff, opts.signal);
      continue;
    }
    const left = deadline - deps.clock();
    if (left <= 0) throw new WaitTimeoutError(`${what} did not settle in ${timeoutMs} ms`, last);
    const pause = nearTheEnd(last) ? Math.min(intervalMs, END_POLL_MS) : intervalMs;
    await deps.sleep(Math.min(pause, left), opts.signal);
  }
}

/** `/sdk/v1/cloud/jobs`: batch measurements from an uploaded frames file or video. */
export class Jobs {
  constructor(
    private readonly http: HttpClient,
    private readonly uploads: Uploads,
    private readonly deps: { sleep: Sleep; clock: Clock },
  ) {}

  /** Creates a job (201, `status: queued`); the same idempotency key and sha256 returns the existing job. */
  async create(body: CreateJobInput, opts: { signal?: AbortSignal } = {}): Promise<CloudJob> {
    const res = await this.http.request<CloudJob>('POST', '/sdk/v1/cloud/jobs', { json: body, signal: opts.signal });
    return res.data;
  }

  async get(jobId: string, opts: { signal?: AbortSignal } = {}): Promise<CloudJob> {
    const res = await this.http.request<CloudJob>('GET', `/sdk/v1/cloud/jobs/${segment(jobId)}`, {
      signal: opts.signal,
      idempotent: true,
    });
    return res.data;
  }

  /**
   * Polls until `completed`, `failed`, `aborted` or `expired` and returns that job; it does not
   * throw for a failed job (read `status` and `error`). Throws `WaitTimeoutError` on timeout.
   */
  async wait(jobId: string, opts: WaitOptions = {}): Promise<CloudJob> {
    return pollUntilTerminal(() => this.get(jobId, { signal: opts.signal }), this.deps, opts, `job ${jobId}`);
  }

  /** Presign, upload and create in one call. */
  async submit(input: SubmitInput): Promise<CloudJob> {
    const { body, contentType, onProgress, signal, sha256, idempotencyKey, ...rest } = input;
    let digest = sha256;
    if (!digest) {
      if (!(body instanceof Uint8Array)) throw new TypeError('submit: pass sha256 for a non-byte body');
      digest = await sha256Hex(body);
    }
    const upload = await this.uploads.presign({ kind: input.kind, contentType }, { signal });
    await this.uploads.put(upload, body, { onProgress, signal });
    return this.create(
      { ...rest, objectKey: upload.objectKey, sha256: digest, idempotencyKey: idempotencyKey ?? `sdk-${digest}` },
      { signal },
    );
  }
}
