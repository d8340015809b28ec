/**
 * A small pool of worker threads running one task each at a time (docs/media.md, "Worker
 * threads"). Workers start on demand up to `size` and stay for later tasks (a video worker keeps
 * its loaded face models); idle workers do not keep the process alive. Tasks beyond the busy
 * workers wait in a bounded queue. Aborting a task asks its worker to stop (a video worker kills
 * its ffmpeg) and terminates the worker if it has not answered within `abortGraceMs`; a worker that
 * dies (crash, out of memory) rejects its task with an error and is replaced for the next one.
 */
import type { Worker } from 'node:worker_threads';
import { fromWire, type FromWorker, type ToWorker } from './messages.js';
import { spawnModuleWorker } from './spawn.js';

export interface ThreadPoolOptions {
  /** The worker's entry module (spawn.ts: a `.ts` source or a built `.js`). */
  entry: URL;
  /** Most workers at once (tasks running in parallel). */
  size: number;
  /** Most tasks waiting for a worker; more are refused with an error. Default 256. */
  maxQueued?: number;
  /** Named in errors ("video worker ..."). */
  name: string;
  /** How long an aborted task's worker may take to stop before it is terminated. Default 2000 ms. */
  abortGraceMs?: number;
  /** V8 heap limits per worker (bounds a runaway task to its worker). */
  resourceLimits?: { maxOldGenerationSizeMb?: number };
  /** Given to every worker as `workerData`. */
  workerData?: unknown;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** The task's progress; `stage` set when it reports a later stage than its main one. */
  onProgress?: (fraction: number, stage?: string) => void;
  /** Called with each item the task emits while it runs (serve.ts `emit`), in order. */
  onItem?: (value: unknown) => void;
  /** Buffers moved (not copied) to the worker with the input. */
  transfer?: ArrayBuffer[];
}

export interface ThreadPool<I, O> {
  readonly size: number;
  run(input: I, opts?: RunOptions): Promise<O>;
  /** Workers started, busy, and tasks queued. */
  stats(): { workers: number; busy: number; queued: number };
  /** Refuses new tasks, rejects queued ones, terminates every worker (running tasks reject). */
  close(): Promise<void>;
}

export class PoolQueueFullError extends Error {
  override name = 'PoolQueueFullError';
}

interface Task {
  id: number;
  input: unknown;
  opts: RunOptions;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  onAbort?: () => void;
  abortTimer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  task: Task | null;
}

export function createThreadPool<I, O>(options: ThreadPoolOptions): ThreadPool<I, O> {
  const size = Math.max(1, Math.floor(options.size));
  const maxQueued = options.maxQueued ?? 256;
  const grace = options.abortGraceMs ?? 2000;
  const slots: Slot[] = [];
  const queue: Task[] = [];
  let nextId = 1;
  let closed = false;

  const settle = (task: Task, fn: () => void): void => {
    if (task.onAbort) task.opts.signal?.removeEventListener('abort', task.onAbort);
    clearTimeout(task.abortTimer);
    fn();
  };

  const spawn = (): Slot => {
    const worker = spawnModuleWorker(options.entry, {
      resourceLimits: options.resourceLimits,
      workerData: options.workerData,
    });
    const slot: Slot = { worker, task: null };
    worker.on('message', (m: FromWorker) => {
      const task = slot.task;
      if (!task || m.id !== task.id) return;
      if (m.type === 'progress') return void task.opts.onProgress?.(m.value, m.stage);
      if (m.type === 'item') return void task.opts.onItem?.(m.value);
      slot.task = null;
      worker.unref();
      if (task.opts.signal?.aborted) settle(task, () => task.reject(task.opts.signal!.reason));
      else if (m.type === 'done') settle(task, () => task.resolve(m.value));
      else settle(task, () => task.reject(fromWire(m.error)));
      pump();
    });
    let lastError: unknown;
    worker.on('error', (err) => (lastError = err));
    worker.on('exit', (code) => {
      slots.splice(slots.indexOf(slot), 1);
      const task = slot.task;
      slot.task = null;
      if (task) {
        const why = task.opts.signal?.aborted
          ? task.opts.signal.reason
          : new Error(
              `${options.name} worker stopped (exit code ${code})${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
              { cause: lastError },
            );
        settle(task, () => task.reject(why));
      }
      pump();
    });
    worker.unref();
    slots.push(slot);
    return slot;
  };

  const start = (slot: Slot, task: Task): void => {
    slot.task = task;
    slot.worker.ref();
    const msg: ToWorker = { type: 'run', id: task.id, input: task.input };
    slot.worker.postMessage(msg, task.opts.transfer ?? []);
  };

  function pump(): void {
    while (!closed && queue.length) {
      const slot = slots.find((s) => !s.task) ?? (slots.length < size ? spawn() : undefined);
      if (!slot) return;
      start(slot, queue.shift()!);
    }
  }

  const abortTask = (task: Task): void => {
    const queued = queue.indexOf(task);
    if (queued >= 0) {
      queue.splice(queued, 1);
      return settle(task, () => task.reject(task.opts.signal!.reason));
    }
    const slot = slots.find((s) => s.task === task);
    if (!slot) return;
    const msg: ToWorker = { type: 'abort', id: task.id };
    slot.worker.postMessage(msg);
    // A worker stuck in synchronous work cannot read the message: recycle it.
    task.abortTimer = setTimeout(() => void slot.worker.terminate(), grace);
    task.abortTimer.unref();
  };

  return {
    size,
    run(input, opts = {}) {
      if (closed) return Promise.reject(new Error(`the ${options.name} pool is closed`));
      if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
      const busy = slots.filter((s) => s.task).length;
      if (busy >= size && queue.length >= maxQueued)
        return Promise.reject(new PoolQueueFullError(`${maxQueued} ${options.name} tasks already wait`));
      return new Promise<O>((resolve, reject) => {
        const task: Task = { id: nextId++, input, opts, resolve: resolve as (v: unknown) => void, reject };
        if (opts.signal) {
          task.onAbort = () => abortTask(task);
          opts.signal.addEventListener('abort', task.onAbort, { once: true });
        }
        queue.push(task);
        pump();
      });
    },
    stats: () => ({ workers: slots.length, busy: slots.filter((s) => s.task).length, queued: queue.length }),
    async close() {
      closed = true;
      for (const task of queue.splice(0)) settle(task, () => task.reject(new Error(`the ${options.name} pool closed`)));
      await Promise.all(slots.map((s) => s.worker.terminate()));
    },
  };
}
