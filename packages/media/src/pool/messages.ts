/** The messages between a thread pool (thread-pool.ts) and its workers (serve.ts). */

export type ToWorker = { type: 'run'; id: number; input: unknown } | { type: 'abort'; id: number };

export interface WireError {
  name: string;
  message: string;
  stack?: string;
}

export type FromWorker =
  /** `stage`: a later stage of the task than its main one (a consumed video's `estimating`). */
  | { type: 'progress'; id: number; value: number; stage?: string }
  /** Something the task hands out while it runs (a video's aux JPEGs), in order. */
  | { type: 'item'; id: number; value: unknown }
  | { type: 'done'; id: number; value: unknown }
  | { type: 'fail'; id: number; error: WireError };

export function toWire(err: unknown): WireError {
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { name: 'Error', message: String(err) };
}

export function fromWire(e: WireError): Error {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.stack) err.stack = e.stack;
  return err;
}
