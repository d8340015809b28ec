/**
 * Is anyone processing the jobs? Every worker (the one `serve` embeds, and `vitals-server worker`
 * processes) beats in the store (store/heartbeats.ts) every HEARTBEAT_MS. The API process watches:
 * when batch jobs wait and no worker has beaten within HEARTBEAT_STALE_MS, it logs a warning once
 * (and that a worker is back when one is), and `GET /health` carries the last check as additive
 * fields (routes/public.ts). Issue 14: changing the store must not silently leave jobs queued.
 *
 * /health reads the last check rather than querying: a health probe keeps answering at once while
 * the database is slow or away.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { countLiveWorkers } from '../store/heartbeats.js';
import { countWaitingJobs } from './leases.js';

/** How often a worker beats. */
export const HEARTBEAT_MS = 10_000;
/** A worker is alive while its last beat is younger than this (three missed beats). */
export const HEARTBEAT_STALE_MS = 3 * HEARTBEAT_MS;
/** Rows of workers silent this long are deleted (they died without stopping). */
const HEARTBEAT_PRUNE_MS = 24 * 3_600_000;
/** How often the API process checks. */
export const WATCH_MS = 10_000;

/** The additive `workers` field of `GET /health`. */
export interface WorkerHealth {
  /** Workers that beat within HEARTBEAT_STALE_MS (this process's own included). */
  alive: number;
  /** Batch jobs queued, or running under a lapsed lease. */
  jobsWaiting: number;
  /** Jobs wait and no worker is alive: nothing will process them until one starts. */
  stalled: boolean;
  /** Whether this process runs a worker itself (`VITALS_EMBEDDED_WORKER` not `0`). */
  embedded: boolean;
  /** When this was checked (epoch ms). */
  checkedAt: number;
}

export async function checkWorkers(ctx: AppContext, embedded: boolean): Promise<WorkerHealth> {
  const now = ctx.clock.now();
  const db = ctx.db.db;
  const alive = await countLiveWorkers(db, now - HEARTBEAT_STALE_MS, now - HEARTBEAT_PRUNE_MS);
  const jobsWaiting = await countWaitingJobs(db, now);
  return { alive, jobsWaiting, stalled: jobsWaiting > 0 && alive === 0, embedded, checkedAt: now };
}

/** The API process's watch: the last check for /health, a log line when the state changes. */
export class WorkerWatch {
  last: WorkerHealth | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
    private readonly embedded: boolean,
  ) {}

  private inflight: Promise<WorkerHealth | undefined> | undefined;

  /** Checks now; a store that cannot answer keeps the previous state (its outage is logged elsewhere). */
  check(): Promise<WorkerHealth | undefined> {
    this.inflight ??= this.run().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  private async run(): Promise<WorkerHealth | undefined> {
    try {
      const h = await checkWorkers(this.ctx, this.embedded);
      if (h.stalled && !this.last?.stalled)
        this.log.warn(
          { jobsWaiting: h.jobsWaiting, workersAlive: 0 },
          `${h.jobsWaiting} batch job(s) waiting and no worker is alive: start \`vitals-server worker\`` +
            (this.embedded ? '' : ' (this node runs none: VITALS_EMBEDDED_WORKER=0)'),
        );
      else if (!h.stalled && this.last?.stalled)
        this.log.info({ jobsWaiting: h.jobsWaiting, workersAlive: h.alive }, 'a worker is alive again');
      this.last = h;
    } catch {
      // Unchanged: the store's unavailability is reported by the requests and workers that meet it.
    }
    return this.last;
  }

  start(everyMs = WATCH_MS): void {
    this.timer = setInterval(() => void this.check(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

const watches = new WeakMap<AppContext, WorkerWatch>();

/** Starts the watch of an API process (batch/plugin.ts); a first check runs before it returns. */
export async function watchWorkers(
  ctx: AppContext,
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
  embedded: boolean,
): Promise<WorkerWatch> {
  const watch = new WorkerWatch(ctx, log, embedded);
  watches.set(ctx, watch);
  ctx.onClose.push(() => watch.stop());
  await watch.check();
  watch.start();
  return watch;
}

/** The watch of this context's API process, if it runs one. */
export const workerWatchOf = (ctx: AppContext): WorkerWatch | undefined => watches.get(ctx);
