/**
 * The session fallback endpoints (CLARIFICATIONS 24; spec: Rate limits), authorized by the session
 * token: the upload becomes a batch_frames job superseding the session and keeping its userRef and
 * features; the result endpoint answers the job that now represents the session.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createBatchWorld, json, mintSession, phantomFramesFile, type BatchWorld, ManualClock } from './batch-world.js';
import { runJob } from '../src/batch/index.js';
import { getJob } from '../src/store/jobs.js';

let w: BatchWorld;
beforeAll(async () => {
  w = await createBatchWorld({ batch: { embeddedWorker: false } });
});
afterAll(async () => w.close());

const frames = (seed = 1): Uint8Array => phantomFramesFile({ durationSec: 20, seed });
const upload = (id: string, token: string | undefined, bytes: Uint8Array = frames(), ct = 'application/octet-stream') =>
  w.app.inject({
    method: 'POST',
    url: `/sdk/v1/cloud/sessions/${id}/frames`,
    headers: { 'content-type': ct, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    payload: Buffer.from(bytes),
  });
const result = (id: string, token: string) =>
  w.app.inject({
    method: 'GET',
    url: `/sdk/v1/cloud/sessions/${id}/result`,
    headers: { authorization: `Bearer ${token}` },
  });

describe('POST /sdk/v1/cloud/sessions/:id/frames', () => {
  test('201: a batch_frames job superseding the session, keeping userRef and features; result follows it to completion', async () => {
    const s = await mintSession(w, { status: 'aborted', userRef: 'u-42', features: ['hrv', 'spo2'] });
    await w.ctx.db.db
      .updateTable('cloud_jobs')
      .set({ error_code: 'disconnected', error_message: 'socket dropped' })
      .where('id', '=', s.sessionId)
      .execute();
    const res = await upload(s.sessionId, s.token);
    expect(res.statusCode).toBe(201);
    expect(res.headers['ratelimit-limit']).toBe('6');
    const job = json(res).data;
    expect(job).toMatchObject({ mode: 'batch_frames', status: 'queued', userRef: 'u-42' });
    const row = (await getJob(w.ctx.db.db, job.jobId))!;
    expect(row.supersedes).toBe(s.sessionId);
    expect(JSON.parse(row.features)).toEqual(['hrv', 'spo2']);
    // The already aborted session keeps its own error; the link is recorded.
    const session = (await getJob(w.ctx.db.db, s.sessionId))!;
    expect(session.status).toBe('aborted');
    expect(session.superseded_by).toBe(job.jobId);

    const polled = await result(s.sessionId, s.token);
    expect(polled.statusCode).toBe(200);
    expect(polled.headers['ratelimit-limit']).toBe('60');
    expect(json(polled).data).toMatchObject({ jobId: job.jobId, status: 'queued' });
    await runJob(w.ctx, w.rt, job.jobId, 't');
    const done = json(await result(s.sessionId, s.token)).data;
    expect(done.status).toBe('completed');
    expect(done.measurement).toMatchObject({ origin: 'cloud', attested: true, userRef: 'u-42' });
    expect(done.measurement.hrv).toBeDefined();
    expect(done.measurement.bloodPressure).toBeUndefined();
  });

  test('a live session becomes aborted/superseded; the same bytes again answer the same job (200)', async () => {
    const s = await mintSession(w, { status: 'running' });
    const first = await upload(s.sessionId, s.token);
    expect(first.statusCode).toBe(201);
    const session = (await getJob(w.ctx.db.db, s.sessionId))!;
    expect(session.status).toBe('aborted');
    expect(session.error_code).toBe('superseded');
    expect(session.metered).toBe(0);
    const again = await upload(s.sessionId, s.token);
    expect(again.statusCode).toBe(200);
    expect(json(again).data.jobId).toBe(json(first).data.jobId);
  });

  test('other bytes make a new job that also supersedes the earlier live fallback job', async () => {
    const s = await mintSession(w, { status: 'aborted' });
    const a = json(await upload(s.sessionId, s.token, frames(1))).data;
    const b = json(await upload(s.sessionId, s.token, frames(2))).data;
    expect(b.jobId).not.toBe(a.jobId);
    expect((await getJob(w.ctx.db.db, a.jobId))!.error_code).toBe('superseded');
    expect(json(await result(s.sessionId, s.token)).data.jobId).toBe(b.jobId);
  });

  test('result before any fallback is the session itself', async () => {
    const s = await mintSession(w, { status: 'pending' });
    const res = await result(s.sessionId, s.token);
    expect(json(res).data).toMatchObject({ jobId: s.sessionId, mode: 'stream', status: 'pending' });
  });

  test('a completed session, or one whose fallback completed → 409 conflict', async () => {
    const done = await mintSession(w, { status: 'completed' });
    const r1 = await upload(done.sessionId, done.token);
    expect(r1.statusCode).toBe(409);
    expect(json(r1).error.code).toBe('conflict');
    const s = await mintSession(w, { status: 'aborted' });
    const job = json(await upload(s.sessionId, s.token)).data;
    await runJob(w.ctx, w.rt, job.jobId, 't');
    const r2 = await upload(s.sessionId, s.token, frames(3));
    expect(r2.statusCode).toBe(409);
  });

  test.each([
    ['no Authorization', undefined, 401, 'token_invalid'],
    ['garbage token', 'vst1.nope.nope', 401, 'token_invalid'],
  ])('%s → %s %s', async (_n, token, status, code) => {
    const s = await mintSession(w);
    const res = await upload(s.sessionId, token);
    expect(res.statusCode).toBe(status);
    expect(json(res).error.code).toBe(code);
  });

  test("another session's token → 404 not_found (ids are not confirmed)", async () => {
    const a = await mintSession(w);
    const b = await mintSession(w);
    const res = await upload(a.sessionId, b.token);
    expect(res.statusCode).toBe(404);
    expect(json(res).error.code).toBe('not_found');
    expect((await result(a.sessionId, b.token)).statusCode).toBe(404);
  });

  test('accepted until TTL + max duration + 10 minutes, then 401 token_expired', async () => {
    const s = await mintSession(w, { status: 'aborted', durationSec: 60, ttlSec: 300 });
    (w.clock as ManualClock).advance((300 + 60 + 600 - 1) * 1000);
    expect((await result(s.sessionId, s.token)).statusCode).toBe(200);
    (w.clock as ManualClock).advance(2001);
    const res = await upload(s.sessionId, s.token);
    expect(res.statusCode).toBe(401);
    expect(json(res).error.code).toBe('token_expired');
  });

  test('wrong Content-Type → 400 invalid_content_type; an invalid frames file is accepted and fails', async () => {
    const s = await mintSession(w, { status: 'aborted' });
    const bad = await upload(s.sessionId, s.token, frames(), 'application/json');
    expect(bad.statusCode).toBe(400);
    expect(json(bad).error.code).toBe('invalid_content_type');
    const junk = await upload(s.sessionId, s.token, new Uint8Array(100));
    expect(junk.statusCode).toBe(201);
    await runJob(w.ctx, w.rt, json(junk).data.jobId, 't');
    expect(json(await result(s.sessionId, s.token)).data.error.code).toBe('invalid_frames_file');
  });

  test('6 uploads per 10 minutes per session, then 429 rate_limited with RateLimit headers', async () => {
    const s = await mintSession(w, { status: 'aborted' });
    for (let i = 0; i < 6; i++) expect((await upload(s.sessionId, s.token, new Uint8Array([i]))).statusCode).toBe(201);
    const res = await upload(s.sessionId, s.token, new Uint8Array([9]));
    expect(res.statusCode).toBe(429);
    expect(json(res).error.code).toBe('rate_limited');
    expect(res.headers['ratelimit-limit']).toBe('6');
    expect(res.headers['ratelimit-remaining']).toBe('0');
    expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
    (w.clock as ManualClock).advance(600_000);
    expect((await upload(s.sessionId, s.token, new Uint8Array([10]))).statusCode).toBe(201);
  });

  test('60 result polls per minute per session, then 429', async () => {
    const s = await mintSession(w);
    for (let i = 0; i < 60; i++) expect((await result(s.sessionId, s.token)).statusCode).toBe(200);
    const res = await result(s.sessionId, s.token);
    expect(res.statusCode).toBe(429);
    expect(res.headers['ratelimit-limit']).toBe('60');
    const other = await mintSession(w);
    expect((await result(other.sessionId, other.token)).statusCode).toBe(200);
  });
});
