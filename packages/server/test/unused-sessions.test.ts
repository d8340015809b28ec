/**
 * A streaming session minted but never connected stayed `pending` for good. The sweep settles it
 * `expired` (`token_expired`), unmetered, once neither the socket (token TTL) nor the fallback
 * (TTL + duration + 10 min) can use it, plus a minute (batch/unused-sessions.ts; docs/decisions.md).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createBatchWorld, json, ManualClock, type BatchWorld } from './batch-world.js';
import { sweepOnce } from '../src/batch/index.js';
import { batchOf } from '../src/batch/batch-runtime.js';
import { UNUSED_SESSION_GRACE_MS } from '../src/batch/unused-sessions.js';
import { FALLBACK_GRACE_EXTRA_SEC } from '../src/domain/session-token.js';

const TTL_SEC = 300;
const clock = new ManualClock(Date.UTC(2026, 10, 1, 12, 0, 0));
let w: BatchWorld;
beforeAll(async () => {
  w = await createBatchWorld({
    clock,
    batch: { embeddedWorker: false },
    env: { VITALS_SESSION_TOKEN_TTL_SEC: String(TTL_SEC) },
  });
});
afterAll(async () => w.close());

async function mint(durationSec: number): Promise<string> {
  const res = await w.call({
    method: 'POST',
    url: '/sdk/v1/cloud/sessions',
    body: { platform: 'web', durationSec, consent: true },
  });
  expect(res.statusCode).toBe(201);
  return json(res).data.sessionId as string;
}

const rowOf = (id: string) =>
  w.ctx.db.db.selectFrom('cloud_jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const sweep = () => sweepOnce(w.ctx, batchOf(w.ctx));
/** The last moment a session of `durationSec` minted at `at` could still be used, by the rules. */
const lastUse = (at: number, durationSec: number) =>
  at + (TTL_SEC + durationSec + FALLBACK_GRACE_EXTRA_SEC) * 1000 + UNUSED_SESSION_GRACE_MS;

test('a never-connected session expires after its last possible use, by its own duration', async () => {
  const at = clock.now();
  const short = await mint(20);
  const long = await mint(180);
  const connected = await mint(20);

  // Past the token's TTL and well into the fallback's grace: still usable, still pending.
  clock.set(at + (TTL_SEC + 20) * 1000);
  await sweep();
  expect((await rowOf(short)).status).toBe('pending');

  clock.set(lastUse(at, 20));
  await sweep();
  expect((await rowOf(short)).status).toBe('pending');

  clock.set(lastUse(at, 20) + 1);
  // A session that connected is running: the orphan sweep's, never this one's.
  await w.ctx.db.db
    .updateTable('cloud_jobs')
    .set({ status: 'running', started_at: clock.now() })
    .where('id', '=', connected)
    .execute();
  await sweep();
  expect(await rowOf(short)).toMatchObject({
    status: 'expired',
    error_code: 'token_expired',
    metered: 0,
    finished_at: lastUse(at, 20) + 1,
  });
  // The longer session's fallback window is still open; the connected one is not this sweep's.
  expect((await rowOf(long)).status).toBe('pending');
  expect((await rowOf(connected)).status).toBe('running');

  const res = await w.call({ url: `/sdk/v1/cloud/jobs/${short}` });
  expect(json(res).data).toMatchObject({ mode: 'stream', status: 'expired', error: { code: 'token_expired' } });

  clock.set(lastUse(at, 180) + 1);
  await sweep();
  expect((await rowOf(long)).status).toBe('expired');
  const usage = await w.ctx.db.db.selectFrom('usage_month').selectAll().execute();
  expect(usage).toEqual([]);
});
