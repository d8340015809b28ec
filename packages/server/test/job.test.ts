/**
 * POST /sdk/v1/cloud/jobs and GET /sdk/v1/cloud/jobs/:jobId (spec: Endpoints; Errors;
 * CLARIFICATIONS 7, 19, 23): every refusal by code, idempotency (200 repeat, 409 conflict, concurrent
 * duplicates make one job), features, spending checks, supersedes, another key's job.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  createBatchWorld,
  createJob,
  idemKey,
  jobBody,
  json,
  phantomFramesFile,
  sha256,
  upload,
  mintSession,
  type BatchWorld,
} from './batch-world.js';
import { getJob } from '../src/store/jobs.js';

let w: BatchWorld;
const frames = (): Uint8Array => phantomFramesFile({ durationSec: 20 });
beforeAll(async () => {
  w = await createBatchWorld({ env: { VITALS_WEBHOOK_ALLOW_HOSTS: '10.1.2.3,192.168.7.0/24,hooks.internal' } });
});
afterAll(async () => w.close());

const post = (body: Record<string, unknown>, key = w.key) =>
  w.call({ method: 'POST', url: '/sdk/v1/cloud/jobs', body, key });

describe('creation', () => {
  test('201 with jobId, status queued, createdAt; GET returns the job', async () => {
    const { objectKey, sha256: h } = await upload(w, frames());
    const res = await post(jobBody(objectKey, h, { userRef: 'user-1', clientRef: 'order-9', platform: 'server' }));
    expect(res.statusCode).toBe(201);
    const job = json(res).data;
    expect(job).toMatchObject({
      mode: 'batch_frames',
      status: 'queued',
      createdAt: w.clock.now(),
      userRef: 'user-1',
      clientRef: 'order-9',
    });
    expect(job.jobId).toMatch(/^cj_[0-9a-f]{24}$/);
    const got = await w.call({ url: `/sdk/v1/cloud/jobs/${job.jobId}` });
    expect(got.statusCode).toBe(200);
    expect(json(got).data.jobId).toBe(job.jobId);
  });

  test('another key (same organization) gets a plain 404', async () => {
    const job = await createJob(w, frames());
    const other = await w.newKey({ orgId: w.key.orgId });
    const res = await w.call({ url: `/sdk/v1/cloud/jobs/${job.jobId}`, key: other });
    expect(res.statusCode).toBe(404);
    expect(json(res).error.code).toBe('not_found');
    const unknown = await w.call({ url: '/sdk/v1/cloud/jobs/cj_000000000000000000000000' });
    expect(unknown.body).toBe(res.body.replace(/"message":"[^"]*"/, '"message":"job not found"'));
  });
});

describe('refusals', () => {
  let objectKey: string;
  let h: string;
  beforeAll(async () => {
    ({ objectKey, sha256: h } = await upload(w, frames()));
  });

  test.each([
    ['missing objectKey', { objectKey: undefined }, 400, 'validation_error'],
    ['missing sha256', { sha256: undefined }, 400, 'validation_error'],
    ['sha256 not 64 hex', { sha256: 'abc' }, 400, 'validation_error'],
    ['missing idempotencyKey', { idempotencyKey: undefined }, 400, 'validation_error'],
    ['idempotencyKey of 15', { idempotencyKey: 'x'.repeat(15) }, 400, 'validation_error'],
    ['idempotencyKey of 201', { idempotencyKey: 'x'.repeat(201) }, 400, 'validation_error'],
    ['kind audio', { kind: 'audio' }, 400, 'invalid_kind'],
    ['kind missing', { kind: undefined }, 400, 'invalid_kind'],
    ['consent missing', { consent: undefined }, 400, 'consent_required'],
    ['consent false', { consent: false }, 400, 'consent_required'],
    ['consent "true"', { consent: 'true' }, 400, 'consent_required'],
    ['platform desktop', { platform: 'desktop' }, 400, 'validation_error'],
    ['userRef empty', { userRef: '' }, 400, 'validation_error'],
    ['userRef with a space', { userRef: 'a b' }, 400, 'validation_error'],
    ['webhookUrl http', { webhookUrl: 'http://example.com/hook' }, 400, 'validation_error'],
    ['webhookUrl loopback', { webhookUrl: 'https://127.0.0.1/hook' }, 400, 'validation_error'],
    ['webhookUrl private', { webhookUrl: 'https://10.0.0.8/hook' }, 400, 'validation_error'],
    ['webhookUrl link-local', { webhookUrl: 'https://169.254.169.254/latest' }, 400, 'validation_error'],
    ['webhookUrl IPv6 loopback', { webhookUrl: 'https://[::1]/hook' }, 400, 'validation_error'],
    ['webhookUrl localhost', { webhookUrl: 'https://localhost/hook' }, 400, 'validation_error'],
    ['webhookUrl allowed host but http', { webhookUrl: 'http://10.1.2.3/hook' }, 400, 'validation_error'],
    ['webhookUrl not a URL', { webhookUrl: 'not a url' }, 400, 'validation_error'],
    ['webhookUrl localhost.', { webhookUrl: 'https://localhost./' }, 400, 'validation_error'],
    ['webhookUrl LOCALHOST.', { webhookUrl: 'https://LOCALHOST./' }, 400, 'validation_error'],
    ['webhookUrl localhost..', { webhookUrl: 'https://localhost../' }, 400, 'validation_error'],
    ['webhookUrl foo.localhost.', { webhookUrl: 'https://foo.localhost./' }, 400, 'validation_error'],
    ['webhookUrl link-local..', { webhookUrl: 'https://169.254.169.254../' }, 400, 'validation_error'],
    ['webhookUrl without a host', { webhookUrl: 'https:///path' }, 400, 'validation_error'],
    ['unknown objectKey', { objectKey: 'up_00000000000000000000000000000000' }, 404, 'object_not_found'],
    ['wrong kind for the object', { kind: 'video' }, 400, 'invalid_kind'],
    ['sha256 mismatch', { sha256: 'f'.repeat(64) }, 422, 'sha256_mismatch'],
    ['supersedes an unknown job', { supersedes: 'cj_000000000000000000000000' }, 404, 'not_found'],
  ])('%s → %i %s', async (_name, over, status, code) => {
    const body: Record<string, unknown> = jobBody(objectKey, h, over);
    for (const [k, v] of Object.entries(over)) if (v === undefined) delete body[k];
    const res = await post(body);
    expect(res.statusCode).toBe(status);
    expect(json(res).error.code).toBe(code);
  });

  test('an object presigned but never uploaded → 404 object_not_found', async () => {
    const res0 = await w.call({ method: 'POST', url: '/sdk/v1/cloud/uploads/presign', body: { kind: 'frames' } });
    const res = await post(jobBody(json(res0).data.objectKey, h));
    expect(res.statusCode).toBe(404);
    expect(json(res).error.code).toBe('object_not_found');
  });

  test("another key's object → 404 object_not_found", async () => {
    const other = await w.newKey({ orgId: w.key.orgId });
    const res = await post(jobBody(objectKey, h), other);
    expect(json(res).error.code).toBe('object_not_found');
  });

  test('an object larger than its kind allows (store limit lowered) → 413 object_too_large', async () => {
    const up = await upload(w, frames());
    await w.ctx.db.db.updateTable('uploads').set({ max_bytes: 100 }).where('object_key', '=', up.objectKey).execute();
    const res = await post(jobBody(up.objectKey, up.sha256));
    expect(res.statusCode).toBe(413);
    expect(json(res).error.code).toBe('object_too_large');
  });

  test('an object already given to a job → 409 conflict', async () => {
    const up = await upload(w, frames());
    expect((await post(jobBody(up.objectKey, up.sha256))).statusCode).toBe(201);
    const res = await post(jobBody(up.objectKey, up.sha256));
    expect(res.statusCode).toBe(409);
    expect(json(res).error.code).toBe('conflict');
  });

  test('a webhookUrl on an allowed private host is accepted (VITALS_WEBHOOK_ALLOW_HOSTS)', async () => {
    for (const url of [
      'https://10.1.2.3/hook',
      'https://192.168.7.20:8443/x',
      'https://hooks.internal/y',
      'https://example.com/z',
    ]) {
      const up = await upload(w, frames());
      const res = await post(jobBody(up.objectKey, up.sha256, { webhookUrl: url }));
      expect(res.statusCode, url).toBe(201);
    }
  });
});

describe('idempotency', () => {
  test('same key and sha256 → 200 with the existing job as it is now; another sha256 → 409', async () => {
    const a = await upload(w, frames());
    const body = jobBody(a.objectKey, a.sha256);
    const first = await post(body);
    expect(first.statusCode).toBe(201);
    const id = json(first).data.jobId;
    await w.ctx.db.db
      .updateTable('cloud_jobs')
      .set({ status: 'running', started_at: w.clock.now() })
      .where('id', '=', id)
      .execute();
    const again = await post(body);
    expect(again.statusCode).toBe(200);
    expect(json(again).data).toMatchObject({ jobId: id, status: 'running' });
    const b = await upload(w, phantomFramesFile({ durationSec: 20, seed: 99 }));
    const conflict = await post({ ...body, objectKey: b.objectKey, sha256: b.sha256 });
    expect(conflict.statusCode).toBe(409);
    expect(json(conflict).error.code).toBe('idempotency_conflict');
  });

  test('the same idempotencyKey under another key is another job', async () => {
    const other = await w.newKey();
    const a = await upload(w, frames());
    const b = await upload(w, frames(), 'frames', other);
    const k = idemKey();
    expect((await post(jobBody(a.objectKey, a.sha256, { idempotencyKey: k }))).statusCode).toBe(201);
    expect((await post(jobBody(b.objectKey, b.sha256, { idempotencyKey: k }), other)).statusCode).toBe(201);
  });

  test('concurrent duplicates create one job', async () => {
    const a = await upload(w, frames());
    const body = jobBody(a.objectKey, a.sha256);
    const results = await Promise.all(Array.from({ length: 8 }, () => post(body)));
    const ids = new Set(results.map((r) => json(r).data.jobId));
    expect(ids.size).toBe(1);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const rows = await w.ctx.db.db
      .selectFrom('cloud_jobs')
      .select('id')
      .where('idempotency_key', '=', body.idempotencyKey as string)
      .execute();
    expect(rows).toHaveLength(1);
  });
});

describe('features and spending', () => {
  const accepted = async (jobId: string) => JSON.parse((await getJob(w.ctx.db.db, jobId))!.accepted_features!);

  test('unknown names dropped; omitted means all the key allows; emotion/gaze stripped without weights', async () => {
    const j1 = await createJob(w, frames(), { features: ['hrv', 'teleport', 'spo2'] });
    expect(await accepted(j1.jobId)).toEqual(['hrv', 'spo2']);
    const j2 = await createJob(w, frames());
    expect(await accepted(j2.jobId)).toEqual(['hrv', 'bp', 'spo2']);
    const narrow = await w.newKey({ features: ['hrv', 'emotion'] });
    const j3 = await createJob(w, frames(), { features: ['hrv', 'bp', 'emotion'] }, narrow);
    expect(await accepted(j3.jobId)).toEqual(['hrv']);
    w.rt.auxCapabilities = async () => ({ emotion: true, gaze: false });
    const j4 = await createJob(w, frames(), { features: ['emotion', 'gaze'] });
    expect(await accepted(j4.jobId)).toEqual(['emotion']);
    w.rt.auxCapabilities = async () => ({ emotion: false, gaze: false });
  });

  test('monthly cloud seconds exhausted → 403 quota_exceeded', async () => {
    const k = await w.newKey({ quotaSecondsMonth: 10 });
    await w.ctx.db.db
      .insertInto('usage_month')
      .values({
        key_id: k.keyId,
        month: new Date(w.clock.now()).toISOString().slice(0, 7),
        cloud_seconds: 10,
        tokens_micro: 0,
      })
      .execute();
    const a = await upload(w, frames(), 'frames', k);
    const res = await post(jobBody(a.objectKey, a.sha256), k);
    expect(res.statusCode).toBe(403);
    expect(json(res).error.code).toBe('quota_exceeded');
  });

  test("the key's token cap exhausted → 403 token_quota_exceeded", async () => {
    const k = await w.newKey({ tokenQuotaMonthUsd: 1 });
    await w.ctx.db.db
      .insertInto('usage_month')
      .values({
        key_id: k.keyId,
        month: new Date(w.clock.now()).toISOString().slice(0, 7),
        cloud_seconds: 0,
        tokens_micro: 1_000_000,
      })
      .execute();
    const a = await upload(w, frames(), 'frames', k);
    const res = await post(jobBody(a.objectKey, a.sha256), k);
    expect(res.statusCode).toBe(403);
    expect(json(res).error.code).toBe('token_quota_exceeded');
  });

  test('organization balance cannot cover it → 403 insufficient_tokens', async () => {
    const k = await w.newKey({ tokenBalanceUsd: 0.001 });
    const a = await upload(w, frames(), 'frames', k);
    const res = await post(jobBody(a.objectKey, a.sha256), k);
    expect(res.statusCode).toBe(403);
    expect(json(res).error.code).toBe('insufficient_tokens');
  });
});

describe('supersedes', () => {
  test('a queued job becomes aborted with error.code superseded', async () => {
    const old = await createJob(w, frames());
    const neu = await createJob(w, frames(), { supersedes: old.jobId });
    const got = json(await w.call({ url: `/sdk/v1/cloud/jobs/${old.jobId}` })).data;
    expect(got.status).toBe('aborted');
    expect(got.error.code).toBe('superseded');
    expect(got.finishedAt).toBe(w.clock.now());
    expect((await getJob(w.ctx.db.db, old.jobId))!.superseded_by).toBe(neu.jobId);
    // Its object is deleted as soon as it finishes.
    expect(await w.rt.objects.stat((await getJob(w.ctx.db.db, old.jobId))!.object_key!)).toBeUndefined();
  });

  test('a streaming session of the same key becomes aborted/superseded, unmetered', async () => {
    const s = await mintSession(w, { status: 'running' });
    await createJob(w, frames(), { supersedes: s.sessionId });
    const row = (await getJob(w.ctx.db.db, s.sessionId))!;
    expect(row.status).toBe('aborted');
    expect(row.error_code).toBe('superseded');
    expect(row.metered).toBe(0);
  });

  test("another key's job cannot be superseded (404)", async () => {
    const other = await w.newKey({ orgId: w.key.orgId });
    const theirs = await createJob(w, frames(), {}, other);
    const a = await upload(w, frames());
    const res = await post(jobBody(a.objectKey, a.sha256, { supersedes: theirs.jobId }));
    expect(res.statusCode).toBe(404);
    expect((await getJob(w.ctx.db.db, theirs.jobId))!.status).toBe('queued');
  });

  test('a terminal job keeps its status; only the link is recorded', async () => {
    const old = await createJob(w, frames());
    await w.ctx.db.db
      .updateTable('cloud_jobs')
      .set({ status: 'failed', error_code: 'invalid_frames_file' })
      .where('id', '=', old.jobId)
      .execute();
    const neu = await createJob(w, frames(), { supersedes: old.jobId });
    const row = (await getJob(w.ctx.db.db, old.jobId))!;
    expect(row.status).toBe('failed');
    expect(row.error_code).toBe('invalid_frames_file');
    expect(row.superseded_by).toBe(neu.jobId);
  });
});

test('sha256 is checked against the stored bytes, not the client claim', async () => {
  const bytes = frames();
  const a = await upload(w, bytes);
  const res = await post(jobBody(a.objectKey, sha256(bytes.subarray(1))));
  expect(json(res).error.code).toBe('sha256_mismatch');
});
