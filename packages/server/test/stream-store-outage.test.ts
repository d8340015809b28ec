/**
 * A store that cannot answer when a streaming session stops (stream/finish.ts): the final
 * measurement is computed once, so the server retries storing it for a few seconds instead of
 * ending the session in `internal_error` at the first refusal. The failures are real
 * (testing.ts `holdStoreWriteLock`): SQLite's write lock held by another connection (SQLITE_BUSY),
 * or on PostgreSQL the jobs table locked past a short statement timeout (57014).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { holdStoreWriteLock, type TestKey, type TestServer } from '../src/testing.js';
import { crop, settledJob, startRunningSession, startTestServer } from './stream-helpers.js';
import { STORE_RETRY_MS } from '../src/stream/finish.js';

let srv: TestServer;
let key: TestKey;
beforeAll(async () => {
  srv = await startTestServer({ env: { VITALS_DB_STATEMENT_TIMEOUT_MS: '200' } });
  key = await srv.createKey();
});
afterAll(() => srv.close());

test('stop while the store refuses writes: the final measurement is stored once it is back', async () => {
  const { s, c } = await startRunningSession(srv, key);
  for (let i = 0; i < 30; i++) c.bin(crop(i, i * 33_333));
  await new Promise((r) => setTimeout(r, 300));
  const release = await holdStoreWriteLock(srv, { pgTable: 'cloud_jobs' });
  try {
    c.json({ t: 'stop' });
    // Long enough for the first attempts to be refused, well short of the retries' end.
    await new Promise((r) => setTimeout(r, 800));
    expect(c.events.find((e) => e.t === 'final' || (e.t === 'error' && e.fatal))).toBeUndefined();
  } finally {
    await release();
  }
  const final = await c.next('final', 10_000);
  expect(c.events.filter((e) => e.t === 'error').map((e) => e.code)).toEqual(['insufficient_signal']);
  const job = await settledJob(srv, s.sessionId);
  expect(job).toMatchObject({ status: 'completed', measurementId: final.measurementId });
}, 20_000);

test('an outage that outlasts the retries ends the session in internal_error', async () => {
  const { c } = await startRunningSession(srv, key);
  c.bin(crop(0, 0));
  await new Promise((r) => setTimeout(r, 100));
  const release = await holdStoreWriteLock(srv, { pgTable: 'cloud_jobs' });
  const started = Date.now();
  try {
    c.json({ t: 'stop' });
    await c.fatal(15_000);
    expect(c.events.filter((e) => e.t === 'error' && e.fatal)).toEqual([
      expect.objectContaining({ code: 'internal_error' }),
    ]);
  } finally {
    await release();
  }
  const waited = Date.now() - started;
  expect(waited).toBeGreaterThanOrEqual(STORE_RETRY_MS.reduce((a, b) => a + b, 0));
  expect(c.events.some((e) => e.t === 'final')).toBe(false);
}, 30_000);
