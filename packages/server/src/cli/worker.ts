/**
 * `vitals-server worker [--data-dir D]` (CONTRACT.md): a job worker only. With PostgreSQL it takes
 * announcements from pg-boss; on SQLite it shares the data dir with `serve` (run `serve` with
 * VITALS_EMBEDDED_WORKER=0, on either store, to leave all processing to workers). Either way it also resumes jobs a
 * dead process left behind, sweeps expired objects and sends due webhooks. Stops on SIGINT/SIGTERM
 * after the jobs in hand settle. Registers the batch tier's operator commands (bin.ts imports this).
 */
import { createContext, closeContext } from '../deps.js';
import { extraCommands, type ExtraCommand } from './extra.js';
import { webhooksCommand } from './webhooks.js';
import { batchOf } from '../batch/runtime.js';

export const workerCommand: ExtraCommand = {
  name: 'worker',
  usage: 'worker [--data-dir D]                          (batch tier: see docs/batch.md)',
  async run(config) {
    const ctx = await createContext(config);
    const rt = batchOf(ctx);
    const w = await rt.startWorker();
    console.log(`worker ${w.owner} started (queue: ${rt.queue.name})`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await closeContext(ctx);
    return 0;
  },
};

extraCommands.push(workerCommand, webhooksCommand);
