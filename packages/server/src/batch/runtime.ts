/**
 * The batch tier's ports and background work, attached to the application context by deps.ts:
 * the object store, the job queue, the worker (started by `serve` in embedded mode and by
 * `vitals-server worker`), and the after-settle hook that deletes a finished job's object and
 * journals its webhook deliveries.
 */
import type { AuxAnalyzer } from '@vitals/media';
import type { AppContext } from '../context.js';
import type { Config } from '../config.js';
import { afterSettleHooks } from '../domain/jobs.js';
import type { ObjectStore } from '../objects/object-store.js';
import { createObjectStore } from '../objects/index.js';
import type { JobQueue } from '../queue/job-queue.js';
import { InProcessQueue } from '../queue/in-process.js';
import { PgBossQueue } from '../queue/pg-boss.js';
import type { BatchConfig } from './config.js';
import { Worker } from './worker.js';
import { deleteObject } from './sweeper.js';
import { journalSettlement } from '../webhooks/enqueue.js';
import type { DeliveryOptions } from '../webhooks/deliver.js';
import { BATCH_MODES } from './leases.js';

declare module '../context.js' {
  interface AppContext {
    /** The batch tier (batch/runtime.ts), attached by createContext. */
    batch?: BatchRuntime;
  }
}

export interface BatchRuntime {
  readonly settings: BatchConfig;
  readonly objects: ObjectStore;
  readonly queue: JobQueue;
  /**
   * Delivery transport options. Production leaves them empty; tests may inject a resolver (to
   * prove the rebinding refusal) — trust of a test CA goes through NODE_EXTRA_CA_CERTS instead.
   */
  delivery: DeliveryOptions;
  /** Emotion and gaze models on this node (stripped and not billed when absent). */
  auxCapabilities(): Promise<{ emotion: boolean; gaze: boolean }>;
  auxAnalyzer(): Promise<AuxAnalyzer>;
  /** Starts this process's worker (idempotent). */
  startWorker(): Promise<Worker>;
  worker?: Worker;
}

export function createBatchRuntime(ctx: AppContext, config: Config, settings: BatchConfig): BatchRuntime {
  const objects = createObjectStore(config);
  const queue: JobQueue = config.databaseUrl
    ? new PgBossQueue(config.databaseUrl, {
        expireInSeconds: Math.max(30, Math.ceil((settings.leaseMs * 2) / 1000)),
        connectTimeoutMs: config.dbConnectTimeoutMs,
        statementTimeoutMs: config.dbStatementTimeoutMs,
      })
    : new InProcessQueue();
  let analyzer: Promise<AuxAnalyzer> | undefined;
  let starting: Promise<Worker> | undefined;
  const rt: BatchRuntime = {
    settings,
    objects,
    queue,
    delivery: {},
    auxAnalyzer: () => (analyzer ??= import('@vitals/media').then((m) => m.createAuxAnalyzer())),
    async auxCapabilities() {
      const a = await rt.auxAnalyzer();
      return { emotion: a.emotionAvailable, gaze: a.gazeAvailable };
    },
    startWorker() {
      starting ??= (async () => {
        const w = new Worker(ctx, rt);
        rt.worker = w;
        ctx.onClose.push(() => w.stop());
        await w.start();
        return w;
      })();
      return starting;
    },
  };
  // Closed in reverse order: the worker (pushed when it starts), then the queue, then the store.
  ctx.onClose.push(() => objects.close?.());
  ctx.onClose.push(() => queue.stop());
  installHooks();
  return rt;
}

export function batchOf(ctx: AppContext): BatchRuntime {
  if (!ctx.batch) throw new Error('the batch tier is not attached to this context');
  return ctx.batch;
}

let hooksInstalled = false;
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  afterSettleHooks.push(async (ctx, job) => {
    const rt = ctx.batch;
    if (!rt) return;
    // Deleted as soon as the job finishes, whatever the outcome (spec: Limits).
    if (job.object_key && (BATCH_MODES as readonly string[]).includes(job.mode))
      await deleteObject(ctx, rt, job.object_key);
  });
  afterSettleHooks.push(async (ctx, job) => {
    if (ctx.batch) await journalSettlement(ctx, job);
  });
}
