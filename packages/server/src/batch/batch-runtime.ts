/**
 * What the batch tier holds for one application context: its settings and ports (object store,
 * job queue, delivery options, aux models) and its worker. The type lives apart from its wiring
 * (runtime.ts) so that the worker, the processing, the sweeper and the webhook dispatcher, which
 * all take a runtime, depend on this description and not on the module that builds them.
 */
import type { AuxAnalyzer } from '@vitals/media';
import type { AppContext } from '../context.js';
import type { ObjectStore } from '../objects/object-store.js';
import type { JobQueue } from '../queue/job-queue.js';
import type { DeliveryOptions } from '../webhooks/deliver.js';
import type { BatchConfig } from './config.js';
import type { MediaThreads } from './media-threads.js';

declare module '../context.js' {
  interface AppContext {
    /** The batch tier (batch/runtime.ts), attached by createContext. */
    batch?: BatchRuntime;
  }
}

/** A running worker as its owners see it (batch/worker.ts). */
export interface BatchWorker {
  /** host:pid:random, stored as a running job's `lease_owner`. */
  readonly owner: string;
  stop(): Promise<void>;
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
  /** Where videos, long estimates and large frames files are processed (media-threads.ts). */
  readonly threads: MediaThreads;
  /** Starts this process's worker (idempotent). */
  startWorker(): Promise<BatchWorker>;
  worker?: BatchWorker;
}

export function batchOf(ctx: AppContext): BatchRuntime {
  if (!ctx.batch) throw new Error('the batch tier is not attached to this context');
  return ctx.batch;
}
