/**
 * Jobs never wait silently (issue 14, item 3): workers beat in the store; the API process checks,
 * logs when batch jobs wait and no worker is alive (and when one is back), and `GET /health`
 * carries the last check beside its `{ ok: true, version }`. An API-only node
 * (VITALS_EMBEDDED_WORKER=0) with a queued job and no worker, then a worker that starts and drains
 * it. On SQLite, and on PostgreSQL with VITALS_TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HEARTBEAT_STALE_MS, workerWatchOf, type WorkerWatch } from '../src/batch/heartbeat.js';
import { beat, forgetWorker } from '../src/store/heartbeats.js';
import {
  ManualClock,
  createBatchWorld,
  createJob,
  json,
  phantomFramesFile,
  waitFor,
  type BatchWorld,
} from './batch-world.js';

let w: BatchWorld;
let watch: WorkerWatch;
const lines: Array<{ level: number; msg: string; jobsWaiting?: number }> = [];
beforeAll(async () => {
  w = await createBatchWorld({
    batch: { embeddedWorker: false },
    logger: { level: 'info', stream: { write: (l: string) => lines.push(JSON.parse(l)) } },
  });
  watch = workerWatchOf(w.ctx)!;
});
afterAll(() => w.close());

const health = async () => {
  const res = await w.app.inject({ url: '/health' });
  expect(res.statusCode).toBe(200);
  return json(res);
};
const PINO_WARN = 40;
const PINO_INFO = 30;

describe('an API-only node and its workers', () => {
  test('at start, nothing waits: /health keeps { ok, version } and adds the check', async () => {
    expect(watch).toBeDefined();
    expect(await health()).toEqual({
      ok: true,
      version: w.ctx.config.version,
      workers: { alive: 0, jobsWaiting: 0, stalled: false, embedded: false, checkedAt: w.clock.now() },
    });
  });

  test('a queued job and no worker: a warning in the log once, and /health says so; then a worker drains it', async () => {
    const job = await createJob(w, phantomFramesFile({ durationSec: 20 }));
    await watch.check();
    await watch.check();
    expect((await health()).workers).toMatchObject({ alive: 0, jobsWaiting: 1, stalled: true });
    const warnings = lines.filter((l) => l.level === PINO_WARN && /no worker is alive/.test(l.msg));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ jobsWaiting: 1 });
    expect(warnings[0].msg).toMatch(/vitals-server worker/);

    // A worker (this process's, started as `vitals-server worker` would) beats, then takes the job.
    const worker = await w.rt.startWorker();
    expect((await waitFor(w, job.jobId)).status).toBe('completed');
    await watch.check();
    expect((await health()).workers).toMatchObject({ alive: 1, jobsWaiting: 0, stalled: false });
    expect(lines.some((l) => l.level === PINO_INFO && /a worker is alive again/.test(l.msg))).toBe(true);

    // A stopping worker leaves at once.
    await worker.stop();
    await watch.check();
    expect((await health()).workers).toMatchObject({ alive: 0, jobsWaiting: 0, stalled: false });
  });

  test('a worker is alive while its last beat is younger than HEARTBEAT_STALE_MS', async () => {
    const db = w.ctx.db.db;
    await beat(db, 'host:1:old', w.clock.now() - HEARTBEAT_STALE_MS - 1);
    expect((await watch.check())!.alive).toBe(0);
    await beat(db, 'host:2:recent', w.clock.now() - HEARTBEAT_STALE_MS + 1000);
    expect((await watch.check())!.alive).toBe(1);
    (w.clock as ManualClock).advance(1001);
    expect((await watch.check())!.alive).toBe(0);
    await forgetWorker(db, 'host:2:recent');
    await forgetWorker(db, 'host:1:old');
  });
});
