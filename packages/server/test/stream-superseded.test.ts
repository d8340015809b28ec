/**
 * A running session settled by someone else is told at once (stream/settled-elsewhere.ts): a
 * session-fallback upload supersedes it while its socket is open (same process: the settlement
 * hook), or another process settles it (the hub's periodic check). The socket gets
 * `error session_already_used` (fatal) and close 1008, and the job keeps the other party's status.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestKey, TestServer } from '../src/testing.js';
import { jobOf, startRunningSession, startTestServer } from './stream-helpers.js';
import { phantomFramesFile } from './batch-world.js';
import { settledCheck } from '../src/stream/settled-elsewhere.js';

let srv: TestServer;
let key: TestKey;
beforeAll(async () => {
  srv = await startTestServer();
  key = await srv.createKey();
});
afterAll(() => srv.close());

const runningWithFrames = () => startRunningSession(srv, key, 5);

describe('a session settled elsewhere while its socket is open', () => {
  test('a fallback upload supersedes it: the socket hears session_already_used at once, not at stop', async () => {
    // The periodic check is pushed out of the way: only the settlement hook can end this socket in time.
    settledCheck.intervalMs = 600_000;
    const { s, c } = await runningWithFrames();
    const res = await fetch(`${srv.baseUrl}/sdk/v1/cloud/sessions/${s.sessionId}/frames`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${s.sessionToken}` },
      body: Buffer.from(phantomFramesFile({ durationSec: 20 })),
    });
    expect(res.status).toBe(201);
    const { error, close } = await c.fatal(3000);
    settledCheck.intervalMs = 2000;
    expect(error).toMatchObject({ t: 'error', code: 'session_already_used', fatal: true });
    expect(close.code).toBe(1008);
    const job = await jobOf(srv, s.sessionId);
    expect(job.status).toBe('aborted');
    expect(job.error.code).toBe('superseded');
  });

  test('settled by another process (no hook here): the periodic check ends the socket within seconds', async () => {
    settledCheck.intervalMs = 2000;
    const { s, c } = await runningWithFrames();
    // What another process's settlement leaves in the shared database, without this process's hooks.
    await srv.ctx.db.db
      .updateTable('cloud_jobs')
      .set({
        status: 'aborted',
        error_code: 'superseded',
        error_message: 'superseded elsewhere',
        finished_at: Date.now(),
        updated_at: Date.now(),
      })
      .where('id', '=', s.sessionId)
      .execute();
    const { error, close } = await c.fatal(6000);
    expect(error).toMatchObject({ code: 'session_already_used', fatal: true });
    expect(close.code).toBe(1008);
    const job = await jobOf(srv, s.sessionId);
    expect(job.status).toBe('aborted');
    expect(job.error.code).toBe('superseded');
  });

  test('a session that ends normally is not disturbed by its own settlement', async () => {
    const { s, c } = await runningWithFrames();
    c.json({ t: 'stop' });
    const final = await c.next('final', 10_000);
    expect(final.measurementId).toMatch(/^meas_/);
    // Five frames are too few for a measurement (insufficient_signal, not fatal); never session_already_used.
    expect(c.events.filter((e) => e.t === 'error').map((e) => e.code)).toEqual(['insufficient_signal']);
    expect((await jobOf(srv, s.sessionId)).status).toBe('completed');
  });
});
