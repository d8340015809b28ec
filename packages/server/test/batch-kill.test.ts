/**
 * A worker process killed mid-job (issue 6: "a worker can be killed mid-job without loss"): real
 * `vitals-server worker` processes on the same store (SQLite data dir, or PostgreSQL with pg-boss
 * when VITALS_TEST_DATABASE_URL is set). The first is SIGKILLed while the job is running; a second
 * takes the job over when the lease runs out. One completed job, one measurement, metered once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import {
  createBatchWorld,
  createJob,
  phantomFramesFile,
  systemClock,
  usageOf,
  waitFor,
  type BatchWorld,
} from './batch-world.js';
import { getJob } from '../src/store/jobs.js';
import { getOrg } from '../src/store/orgs-keys.js';
import { costMicro } from '../src/domain/pricing.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const children: ChildProcess[] = [];
let w: BatchWorld | undefined;
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await Promise.all(
    children.map((c) =>
      c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined,
    ),
  );
  await w?.close();
});

function startWorker(world: BatchWorld, env: Record<string, string>): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', 'packages/server/src/bin.ts', 'worker', '--data-dir', world.dataDir],
    {
      cwd: root,
      env: {
        ...process.env,
        VITALS_DATA_DIR: world.dataDir,
        ...(world.databaseUrl ? { VITALS_DATABASE_URL: world.databaseUrl } : {}),
        VITALS_JOB_LEASE_SEC: '1',
        VITALS_WORKER_POLL_MS: '100',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  return child;
}

test('SIGKILL a worker mid-job: another finishes it, exactly once', async () => {
  w = await createBatchWorld({ clock: systemClock, pgQueue: true, batch: { embeddedWorker: false } });
  const balance0 = (await getOrg(w.ctx.db.db, w.key.orgId))!.tokenBalanceMicro!;
  const job = await createJob(w, phantomFramesFile({ durationSec: 20 }), { features: ['hrv'] });

  const a = startWorker(w, { VITALS_TEST_JOB_DELAY_MS: '60000' });
  const running = await waitFor(w, job.jobId, ['running'], 30_000);
  expect(running.lease_owner).toContain(`:${a.pid}:`);
  a.kill('SIGKILL');
  await new Promise((r) => a.once('exit', r));
  expect((await getJob(w.ctx.db.db, job.jobId))!.status).toBe('running'); // nobody settled it

  const b = startWorker(w, {});
  const done = await waitFor(w, job.jobId, ['completed', 'failed', 'aborted', 'expired'], 40_000);
  expect(done.status).toBe('completed');
  expect(done.attempts).toBe(2);
  expect(done.lease_owner).toBeNull();
  const ms = await w.ctx.db.db.selectFrom('measurements').select('id').where('key_id', '=', w.key.keyId).execute();
  expect(ms.map((m) => m.id)).toEqual([done.measurement_id]);
  const cost = costMicro(done.seconds_processed, ['hrv']);
  const usage = await usageOf(w, w.key.keyId);
  expect(usage.seconds).toBeCloseTo(done.seconds_processed, 3);
  expect(usage.tokens).toBe(cost);
  expect((await getOrg(w.ctx.db.db, w.key.orgId))!.tokenBalanceMicro).toBe(balance0 - cost);
  b.kill('SIGTERM');
}, 90_000);
