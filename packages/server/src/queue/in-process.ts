/**
 * The embedded queue: announcements in process memory, handlers run in this process. Duplicate
 * announcements of a job already waiting or running here are folded.
 */
import type { JobHandler, JobQueue } from './job-queue.js';

export class InProcessQueue implements JobQueue {
  readonly name = 'in-process';
  private waiting: string[] = [];
  private known = new Set<string>();
  private handler: JobHandler | undefined;
  private running = 0;
  private concurrency = 1;
  private idle: Array<() => void> = [];
  private stopped = false;

  async enqueue(jobId: string): Promise<void> {
    if (this.stopped || this.known.has(jobId)) return;
    this.known.add(jobId);
    this.waiting.push(jobId);
    this.pump();
  }

  async work(handler: JobHandler, opts: { concurrency: number }): Promise<void> {
    this.handler = handler;
    this.concurrency = Math.max(1, opts.concurrency);
    this.pump();
  }

  private pump(): void {
    while (this.handler && !this.stopped && this.running < this.concurrency && this.waiting.length) {
      const id = this.waiting.shift()!;
      this.running++;
      void this.handler(id)
        .catch(() => undefined)
        .finally(() => {
          this.running--;
          this.known.delete(id);
          if (this.running === 0) for (const f of this.idle.splice(0)) f();
          this.pump();
        });
    }
  }

  /** Resolves when nothing is running (tests and graceful shutdown). */
  async drain(): Promise<void> {
    if (this.running === 0 && (this.waiting.length === 0 || !this.handler)) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
    return this.drain();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.waiting = [];
    if (this.running > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }
}
