/**
 * The worker's scan takes over running jobs whose lease ran out without anyone awaiting the run. A
 * store that refuses the claim (here: another connection holds SQLite's write lock, a real
 * SQLITE_BUSY) must not end the process with an unhandled rejection (vitest fails a run that has
 * one); the job stays claimable and the next scan, with the store back, completes it.
 */
import { expect, test } from 'vitest';
import { createBatchWorld, createJob, phantomFramesFile, waitFor, ManualClock } from './batch-world.js';
import { Worker } from '../src/batch/index.js';
import { claimJob } from '../src/batch/leases.js';
import { getJob } from '../src/store/jobs.js';
import { holdStoreWriteLock } from '../src/testing.js';

test.skipIf(!!process.env.VITALS_TEST_DATABASE_URL)(
  'a scan that cannot claim a lapsed job warns and leaves it for the next scan',
  async () => {
    const clock = new ManualClock(Date.now());
    const w = await createBatchWorld({ batch: { embeddedWorker: false }, clock });
    try {
      const job = await createJob(w, phantomFramesFile({ durationSec: 20, seed: 21 }));
      // A worker claimed it and died: running, its lease lapsed.
      expect(await claimJob(w.ctx.db.db, job.jobId, 'dead-worker', clock.now(), 1000)).toBe(true);
      clock.advance(2000);
      const worker = new Worker(w.ctx, w.rt);
      const warnings: string[] = [];
      const onWarning = (e: Error) => warnings.push(e.message);
      process.on('warning', onWarning);
      const release = await holdStoreWriteLock({ ctx: w.ctx, config: { dataDir: w.dataDir } } as never);
      try {
        await worker.scan();
        await expect
          .poll(() => warnings.some((m) => m.includes(`batch job ${job.jobId}: not taken over (SQLITE_BUSY`)), {
            timeout: 5000,
          })
          .toBe(true);
      } finally {
        await release();
        process.off('warning', onWarning);
      }
      expect(await getJob(w.ctx.db.db, job.jobId)).toMatchObject({ status: 'running', lease_owner: 'dead-worker' });
      await worker.scan();
      expect((await waitFor(w, job.jobId, ['completed', 'failed'])).status).toBe('completed');
    } finally {
      await w.close();
    }
  },
  30_000,
);
