/**
 * A worker: claims batch jobs (lease), processes them, settles them once; scans the store for jobs
 * nobody announced or whose worker died; sweeps expired objects; delivers due webhooks. The embedded
 * `serve` runs one in-process; `vitals-server worker` runs only this.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import { settleJob } from '../domain/jobs.js';
import { getJob, isTerminal } from '../store/jobs.js';
import type { BatchRuntime, BatchWorker } from './batch-runtime.js';
import { claimJob, claimableJobs, renewLease } from './leases.js';
import { processJob } from './process.js';
import { sweepOnce } from './sweeper.js';
import { deliverDue } from '../webhooks/dispatcher.js';
import { unavailableReason } from '../store/unavailable.js';
import { beat, forgetWorker } from '../store/heartbeats.js';
import { HEARTBEAT_MS } from './heartbeat.js';

/** How often a running job's progress reaches the store at the least (with its lease renewal). */
export const PROGRESS_WRITE_MS = 1000;

export const workerId = (): string => `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

export async function runJob(ctx: AppContext, rt: BatchRuntime, jobId: string, owner: string): Promise<void> {
  const db = ctx.db.db;
  const { leaseMs, maxJobAttempts } = rt.settings;
  if (!(await claimJob(db, jobId, owner, ctx.clock.now(), leaseMs))) return;
  const job = await getJob(db, jobId);
  if (!job || isTerminal(job.status)) return;
  if (job.attempts > maxJobAttempts) {
    await settleJob(ctx, jobId, {
      status: 'failed',
      code: 'internal_error',
      message: `processing did not finish after ${maxJobAttempts} attempts`,
    });
    return;
  }
  const abort = new AbortController();
  let progress: { stage: string; fraction: number } = { stage: 'claimed', fraction: 0 };
  // Renew at a third of the lease, and at least every PROGRESS_WRITE_MS so that the job's
  // `stats.progress` a client polls moves while it waits; losing the lease (taken over,
  // superseded) stops the work.
  const beat = setInterval(
    () => {
      const stats = JSON.stringify({
        progress: { stage: progress.stage, fraction: Math.round(progress.fraction * 100) / 100 },
      });
      renewLease(db, jobId, owner, ctx.clock.now(), leaseMs, stats).then(
        (held) => held || abort.abort(new Error('lease lost')),
        () => undefined,
      );
    },
    Math.max(50, Math.min(PROGRESS_WRITE_MS, Math.floor(leaseMs / 3))),
  );
  try {
    const outcome = await processJob(rt, job, {
      signal: abort.signal,
      progress: (stage, fraction) => (progress = { stage, fraction }),
    });
    await settleJob(ctx, jobId, outcome);
  } catch (err) {
    if (abort.signal.aborted) return; // someone else owns or ended the job now
    // The object store or the database is away (store/unavailable.ts): not the job's fault. The job
    // stays running under this lease, which lapses, and a worker claims it again (at most
    // maxJobAttempts claims in all, then it fails as "did not finish").
    const reason = unavailableReason(err);
    if (reason) {
      process.emitWarning(`batch job ${jobId}: storage unavailable (${reason}); retried once its lease lapses`);
      return;
    }
    await settleJob(ctx, jobId, {
      status: 'failed',
      code: 'internal_error',
      message: 'processing failed unexpectedly',
    });
  } finally {
    clearInterval(beat);
  }
}

export class Worker implements BatchWorker {
  readonly owner = workerId();
  private timers: NodeJS.Timeout[] = [];
  private busy = new Set<string>();
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly rt: BatchRuntime,
  ) {}

  async start(): Promise<void> {
    await this.rt.queue.work((id) => this.handle(id), { concurrency: this.rt.settings.concurrency });
    const every = (ms: number, fn: () => Promise<unknown>): void => {
      let running = false;
      const t = setInterval(() => {
        if (running || this.stopped) return;
        running = true;
        fn()
          .catch(() => undefined)
          .finally(() => (running = false));
      }, ms);
      t.unref();
      this.timers.push(t);
    };
    // Alive for whoever watches (batch/heartbeat.ts): one beat before taking work, then every HEARTBEAT_MS.
    await this.beat().catch(() => undefined);
    every(HEARTBEAT_MS, () => this.beat());
    every(this.rt.settings.pollMs, () => this.scan());
    every(this.rt.settings.pollMs, () => deliverDue(this.ctx, this.rt));
    every(this.rt.settings.sweepMs, () => sweepOnce(this.ctx, this.rt));
    // At start: resume what a previous process left queued or running (lease permitting).
    await this.scan().catch(() => undefined);
  }

  private async handle(jobId: string): Promise<void> {
    if (this.busy.has(jobId)) return;
    this.busy.add(jobId);
    try {
      await runJob(this.ctx, this.rt, jobId, this.owner);
    } finally {
      this.busy.delete(jobId);
    }
  }

  /**
   * Announces every queued job found in the store (the queue folds duplicates) and takes over
   * running jobs whose lease ran out (their worker died) directly: a queue may still hold those as
   * in flight.
   */
  async scan(): Promise<void> {
    for (const { id, status } of await claimableJobs(this.ctx.db.db, this.ctx.clock.now())) {
      if (this.busy.has(id)) continue;
      if (status === 'queued') await this.rt.queue.enqueue(id);
      // Nobody awaits this run: a failure (the store away while claiming) must not become an
      // unhandled rejection, which ends the process; the job stays claimable for the next scan.
      else
        void this.handle(id).catch((err: unknown) =>
          process.emitWarning(
            `batch job ${id}: not taken over (${unavailableReason(err) ?? 'error'}); the next scan retries`,
          ),
        );
    }
  }

  private beat(): Promise<void> {
    return beat(this.ctx.db.db, this.owner, this.ctx.clock.now());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
    await this.rt.queue.stop();
    await forgetWorker(this.ctx.db.db, this.owner).catch(() => undefined);
  }
}
