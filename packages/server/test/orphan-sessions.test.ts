/**
 * A streaming session whose server process died stays `running` with nobody to end it; the sweep
 * settles it `aborted` (`disconnected`) once no live process could still hold it (issue 19, found by
 * the soak). Spec: States and transitions, "Socket drops → aborted".
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createBatchWorld, json, type BatchWorld } from './batch-world.js';
import { sweepOnce } from '../src/batch/index.js';
import { batchOf } from '../src/batch/batch-runtime.js';
import { ORPHAN_GRACE_MS } from '../src/batch/orphans.js';
import { WALL_GRACE_MS } from '../src/stream/limits.js';

let w: BatchWorld;
beforeAll(async () => {
  w = await createBatchWorld({ batch: { embeddedWorker: false } });
});
afterAll(async () => w.close());

/** A session that reached `ready` at `startedAt` in a process that then died. */
async function runningSession(startedAt: number): Promise<string> {
  const res = await w.call({
    method: 'POST',
    url: '/sdk/v1/cloud/sessions',
    body: { platform: 'web', durationSec: 30, consent: true },
  });
  const id = json(res).data.sessionId as string;
  await w.ctx.db.db
    .updateTable('cloud_jobs')
    .set({ status: 'running', started_at: startedAt })
    .where('id', '=', id)
    .execute();
  return id;
}

const statusOf = async (id: string) =>
  w.ctx.db.db.selectFrom('cloud_jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

test('a running session past its duration, the wall grace and the orphan grace is aborted, unmetered', async () => {
  const now = w.clock.now();
  const end = 30_000 + WALL_GRACE_MS + ORPHAN_GRACE_MS;
  const orphan = await runningSession(now - end - 1);
  const live = await runningSession(now - end + 1_000);
  await sweepOnce(w.ctx, batchOf(w.ctx));
  expect(await statusOf(orphan)).toMatchObject({ status: 'aborted', error_code: 'disconnected', metered: 0 });
  expect(await statusOf(live)).toMatchObject({ status: 'running' });
  const res = await w.call({ url: `/sdk/v1/cloud/jobs/${orphan}` });
  expect(json(res).data).toMatchObject({ status: 'aborted', error: { code: 'disconnected' } });
});
