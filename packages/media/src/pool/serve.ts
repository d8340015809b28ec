/**
 * The worker side of a thread pool (thread-pool.ts): runs each task the pool posts through
 * `handler`, with an AbortSignal the pool's `abort` message fires and a progress callback, and
 * posts the result (or the error) back. Call it once at the top of a worker entry module.
 */
import { parentPort } from 'node:worker_threads';
import { toWire, type FromWorker, type ToWorker } from './messages.js';

export interface TaskContext {
  signal: AbortSignal;
  /** `stage` names a later stage of the task than its main one (the caller's default). */
  progress(fraction: number, stage?: string): void;
  /** Hands `value` to the caller's `onItem` now, while the task runs (copied, as every message). */
  emit(value: unknown): void;
}

export function serveTasks<I, O>(
  handler: (input: I, ctx: TaskContext) => Promise<O> | O,
  transferOf: (output: O) => ArrayBuffer[] = () => [],
): void {
  const port = parentPort;
  if (!port) throw new Error('serveTasks runs in a worker thread');
  const running = new Map<number, AbortController>();
  const post = (m: FromWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);
  port.on('message', (m: ToWorker) => {
    if (m.type === 'abort') return void running.get(m.id)?.abort(new Error('aborted'));
    const ac = new AbortController();
    running.set(m.id, ac);
    const ctx: TaskContext = {
      signal: ac.signal,
      progress: (value, stage) =>
        post(stage ? { type: 'progress', id: m.id, value, stage } : { type: 'progress', id: m.id, value }),
      emit: (value) => post({ type: 'item', id: m.id, value }),
    };
    Promise.resolve()
      .then(() => handler(m.input as I, ctx))
      .then(
        (value) => post({ type: 'done', id: m.id, value }, transferOf(value)),
        (err: unknown) => post({ type: 'fail', id: m.id, error: toWire(err) }),
      )
      .finally(() => running.delete(m.id));
  });
}
