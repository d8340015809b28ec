/**
 * Wiring of the batch tier for one application context (deps.ts calls it): the object store, the
 * job queue, the worker (started by `serve` in embedded mode and by `vitals-server worker`), and the
 * settlement listener that deletes a finished job's object. What a runtime is: batch-runtime.ts.
 */
import type { AuxAnalyzer } from '@vitals/media';
import type { AppContext } from '../context.js';
import type { Config } from '../config.js';
import { createObjectStore } from '../objects/index.js';
import type { JobQueue } from '../queue/job-queue.js';
import { InProcessQueue } from '../queue/in-process.js';
import { PgBossQueue } from '../queue/pg-boss.js';
import type { BatchConfig } from './config.js';
import type { BatchRuntime, BatchWorker } from './batch-runtime.js';
import { Worker } from './worker.js';
import { deleteObject } from './sweeper.js';
import { BATCH_MODES } from './leases.js';
import { createMediaThreads } from './media-threads.js';

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
  let starting: Promise<BatchWorker> | undefined;
  const threads = createMediaThreads(config.mediaThreads, config.mediaNice);
  const rt: BatchRuntime = {
    threads,
    settings,
    objects,
    queue,
    delivery: {},
    auxAnalyzer: () => (analyzer ??= import('@vitals/media').then((m) => m.createAuxAnalyzer())),
    async auxCapabilities() {
      // Found on a video worker when there are threads: loading the models blocks a thread ~1 s.
      const onThread = threads.auxCapabilities();
      if (onThread) return onThread;
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
  ctx.onClose.push(() => threads.close());
  ctx.onClose.push(() => queue.stop());
  // Deleted as soon as the job finishes, whatever the outcome (spec: Limits).
  ctx.settlements.on('delete the uploaded object', async (job) => {
    if (job.object_key && (BATCH_MODES as readonly string[]).includes(job.mode))
      await deleteObject(ctx, rt, job.object_key);
  });
  return rt;
}
