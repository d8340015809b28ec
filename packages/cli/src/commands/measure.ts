/**
 * `vitals measure <video> --consent`: the batch tier end to end. Presign (kind video), upload with
 * a progress bar, create the job with an idempotency key derived from the file's SHA-256 and the
 * options that change the result (a re-run returns the same job and is never charged twice),
 * poll with a spinner, print the measurement.
 */
import { open, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { FEATURES, USER_REF_PATTERN, VIDEO_MAX_BYTES, VIDEO_MAX_DURATION_SEC, sha256Hex } from '@vitals/protocol';
import { WaitTimeoutError, fileSource, sha256File, type CloudJob } from '@vitals/sdk';
import { CliError } from '../errors.js';
import { loadConfig } from '../config.js';
import { makeClient } from '../client.js';
import { mp4DurationSec } from '../mp4-duration.js';
import type { CliIo } from '../io.js';
import { formatJobStatus, formatMeasurement } from '../ui/format.js';
import { ProgressBar, Spinner } from '../ui/progress.js';

export const VIDEO_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
};

export interface MeasureOptions {
  consent?: boolean;
  userRef?: string;
  features?: string;
  json?: boolean;
  timeout?: string;
  interval?: string;
  webhookUrl?: string;
  clientRef?: string;
}

interface Checked {
  path: string;
  contentType: string;
  size: number;
  features: string[] | undefined;
  timeoutMs: number;
  intervalMs: number;
}

/** Everything that is the caller's mistake is found before any network call (exit 2). */
export async function checkMeasureInput(video: string, opts: MeasureOptions): Promise<Checked> {
  if (opts.consent !== true) {
    throw new CliError(
      'usage_error',
      'measuring requires --consent: confirm the person in the video agreed to be measured',
    );
  }
  const contentType = VIDEO_TYPES[extname(video).toLowerCase()];
  if (!contentType)
    throw new CliError('bad_file', `unsupported file type "${extname(video) || video}": use .mp4, .mov or .webm`);
  let size: number;
  try {
    const s = await stat(video);
    if (!s.isFile()) throw new Error('not a file');
    size = s.size;
    await (await open(video, 'r')).close();
  } catch {
    throw new CliError('bad_file', `cannot read ${video}`);
  }
  if (size === 0) throw new CliError('bad_file', `${video} is empty`);
  if (size > VIDEO_MAX_BYTES)
    throw new CliError('bad_file', `${video} is ${size} bytes; videos are limited to ${VIDEO_MAX_BYTES}`);
  // The service refuses a video over an hour only once it has it: an MP4 or MOV says its length up front.
  const declared = contentType === 'video/webm' ? null : await mp4DurationSec(video);
  if (declared !== null && declared > VIDEO_MAX_DURATION_SEC)
    throw new CliError(
      'bad_file',
      `${video} lasts ${(declared / 60).toFixed(1)} min; videos are measured up to ${VIDEO_MAX_DURATION_SEC / 60} min: cut out the part to measure`,
    );
  if (opts.userRef !== undefined && !new RegExp(USER_REF_PATTERN).test(opts.userRef)) {
    throw new CliError('usage_error', '--user-ref must match [A-Za-z0-9._:@-]{1,64} (an opaque id, no personal data)');
  }
  let features: string[] | undefined;
  if (opts.features !== undefined) {
    features = [
      ...new Set(
        opts.features
          .split(',')
          .map((f) => f.trim())
          .filter(Boolean),
      ),
    ].sort();
    const unknown = features.filter((f) => !(FEATURES as readonly string[]).includes(f));
    if (unknown.length)
      throw new CliError('usage_error', `unknown feature(s) ${unknown.join(', ')}; choose from ${FEATURES.join(', ')}`);
  }
  const timeoutMs = seconds(opts.timeout, 600, '--timeout');
  const intervalMs = seconds(opts.interval, 1, '--interval');
  return { path: video, contentType, size, features, timeoutMs, intervalMs };
}

function seconds(text: string | undefined, dflt: number, flag: string): number {
  const v = text === undefined ? dflt : Number(text);
  if (!Number.isFinite(v) || v <= 0) throw new CliError('usage_error', `${flag} must be a positive number of seconds`);
  return v * 1000;
}

/**
 * `cli-<sha256>-<12 hex>`: the file plus every option that changes the result (features, userRef,
 * kind). Same file and options: same job, no second charge. Different options: a new job.
 */
export async function idempotencyKeyFor(sha256: string, o: { features?: string[]; userRef?: string }): Promise<string> {
  const options = JSON.stringify({ kind: 'video', features: o.features ?? null, userRef: o.userRef ?? null });
  return `cli-${sha256}-${(await sha256Hex(options)).slice(0, 12)}`;
}

export async function measure(video: string, opts: MeasureOptions, io: CliIo): Promise<number> {
  const input = await checkMeasureInput(video, opts);
  const client = makeClient(loadConfig(io.env), io);
  const say = (s: string): void => {
    if (!opts.json || io.stderr.isTTY) io.stderr.write(`${s}\n`);
  };

  const sha256 = await sha256File(input.path);
  const upload = await client.uploads.presign({ kind: 'video', contentType: input.contentType }, { signal: io.signal });
  const bar = new ProgressBar(io, 'uploading');
  // The upload URL is a credential: it is never printed, logged or put in an error.
  await client.uploads.put(upload, await fileSource(input.path), {
    onProgress: (p) => bar.update(p.loaded, p.total),
    signal: io.signal,
  });
  bar.done();

  const created = await client.jobs.create(
    {
      objectKey: upload.objectKey,
      kind: 'video',
      sha256,
      idempotencyKey: await idempotencyKeyFor(sha256, { features: input.features, userRef: opts.userRef }),
      consent: true,
      platform: 'server',
      features: input.features,
      userRef: opts.userRef,
      webhookUrl: opts.webhookUrl,
      clientRef: opts.clientRef,
    },
    { signal: io.signal },
  );
  say(`job ${created.jobId} ${created.status}`);

  const spinner = new Spinner(io);
  if (!opts.json || io.stderr.isTTY) spinner.start(`job ${created.jobId}: ${created.status}`);
  let job: CloudJob;
  try {
    job = await client.jobs.wait(created.jobId, {
      timeoutMs: input.timeoutMs,
      intervalMs: input.intervalMs,
      signal: io.signal,
      onPoll: (j) => spinner.set(formatJobStatus(j, io.stderr.isTTY === true)),
    });
  } catch (err) {
    spinner.stop();
    if (err instanceof WaitTimeoutError) {
      throw new WaitTimeoutError(
        `job ${created.jobId} still not settled after ${input.timeoutMs / 1000} s; check later with the same command`,
      );
    }
    throw err;
  }
  spinner.stop();
  return report(job, opts, io);
}

function report(job: CloudJob, opts: MeasureOptions, io: CliIo): number {
  if (opts.json) io.stdout.write(JSON.stringify(job) + '\n');
  if (job.status === 'completed' && job.measurement) {
    if (!opts.json) io.stdout.write(formatMeasurement(job.measurement, job));
    return 0;
  }
  const why = job.error ? `${job.error.code}: ${job.error.message}` : 'no reason given';
  throw new CliError('job_not_completed', `job ${job.jobId} ${job.status} (${why})`);
}
