/**
 * "A job reached a terminal status", for one application context: settleJob (domain/jobs.ts) emits
 * it once per job, after the move is committed; the batch tier deletes the uploaded object, the
 * webhook journal records deliveries, the stream hub ends a session settled from elsewhere. Each
 * context has its own listeners, so two apps in one process (tests, a CLI inside a server) never
 * see each other's jobs. A listener that fails never un-settles the job and never stops the others:
 * its failure is reported (with the listener's name and the job id) and the next one runs.
 */
import type { JobRow } from '../store/jobs.js';

export type SettledListener = (job: JobRow) => Promise<void> | void;

/** Where a listener's failure goes; the default is a process warning (stderr, like the worker's). */
export type ListenerFailure = (message: string, err: unknown) => void;

const warn: ListenerFailure = (message, err) =>
  process.emitWarning(`${message}: ${err instanceof Error ? err.message : String(err)}`);

export class SettlementEvents {
  private readonly listeners: Array<{ name: string; listener: SettledListener }> = [];

  constructor(private readonly onFailure: ListenerFailure = warn) {}

  /** Adds a listener, run after the ones before it; returns its removal. */
  on(name: string, listener: SettledListener): () => void {
    const entry = { name, listener };
    this.listeners.push(entry);
    return () => {
      const i = this.listeners.indexOf(entry);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  async emit(job: JobRow): Promise<void> {
    for (const { name, listener } of [...this.listeners]) {
      try {
        await listener(job);
      } catch (err) {
        this.onFailure(`after settling job ${job.id}, "${name}" failed`, err);
      }
    }
  }
}
