/**
 * The service with `VITALS_OBJECTS_URL` pointing at a real S3 protocol server (s3rver): presign →
 * PUT {uploadUrl} → frames job completed by the embedded worker; a video job (ffmpeg reads the
 * downloaded copy); the session fallback upload; the size cap while streaming; the sweeper (TTL and
 * orphans); and a store that is away answering clean 500s.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { resolveFfmpeg } from '@vitals/media';
import { FRAMES_MAX_BYTES } from '@vitals/protocol';
import {
  createBatchWorld,
  createJob,
  json,
  jobBody,
  mintSession,
  phantomFramesFile,
  presign,
  put,
  sha256,
  waitFor,
  type BatchWorld,
  ManualClock,
} from './batch-world.js';
import { runJob, sweepOnce } from '../src/batch/index.js';
import { S3ObjectStore } from '../src/objects/index.js';
import { parseObjectsUrl } from '../src/config.js';
import { getJob } from '../src/store/jobs.js';
import { S3RVER_CREDENTIALS, startS3, type TestS3 } from './s3-server.js';

const PREFIX = 'svc';
let s3: TestS3;
let client: S3Client;
let w: BatchWorld;

beforeAll(async () => {
  s3 = await startS3();
  client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: {
      accessKeyId: S3RVER_CREDENTIALS.AWS_ACCESS_KEY_ID,
      secretAccessKey: S3RVER_CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    },
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  w = await createBatchWorld({ env: s3.env(PREFIX), batch: { embeddedWorker: true } });
});
afterAll(async () => {
  await w?.close();
  await (w?.rt.objects as S3ObjectStore | undefined)?.close();
  client?.destroy();
  await s3?.close();
});

/** The object as the bucket has it (undefined when absent). */
async function inBucket(objectKey: string, prefix = PREFIX): Promise<{ size?: number; sha256?: string } | undefined> {
  try {
    const h = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${prefix}/${objectKey}` }));
    return { size: h.ContentLength, sha256: h.Metadata?.sha256 };
  } catch (err) {
    if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return undefined;
    throw err;
  }
}
const localObjects = (): string[] => fs.readdirSync(w.dataDir).filter((f) => f === 'objects');
const tmpLeft = (): string[] => fs.readdirSync(path.join(w.dataDir, 'objects-tmp'));

test('the S3 adapter is in use; nothing goes to <data dir>/objects', () => {
  expect(w.rt.objects).toBeInstanceOf(S3ObjectStore);
  expect(localObjects()).toEqual([]);
});

test('presign → PUT → frames job → completed by the worker; the object lives in the bucket until the job ends', async () => {
  const bytes = phantomFramesFile({ durationSec: 20, heartRateBpm: 72 });
  const up = await presign(w);
  const res = await put(w, up.uploadUrl, bytes);
  expect(res.statusCode).toBe(200);
  expect(json(res).data).toEqual({ objectKey: up.objectKey, size: bytes.length, sha256: sha256(bytes) });
  expect(await inBucket(up.objectKey)).toEqual({ size: bytes.length, sha256: sha256(bytes) });
  expect(tmpLeft()).toEqual([]);

  const created = await w.call({
    method: 'POST',
    url: '/sdk/v1/cloud/jobs',
    body: jobBody(up.objectKey, sha256(bytes)),
  });
  expect(created.statusCode).toBe(201);
  const job = json(created).data;
  const done = await waitFor(w, job.jobId, ['completed', 'failed'], 30_000);
  expect(done.status).toBe('completed');
  const wire = json(await w.call({ url: `/sdk/v1/cloud/jobs/${job.jobId}` })).data;
  expect(wire.measurement.cardiac.heartRate.value).toBeGreaterThan(67);
  expect(wire.measurement.cardiac.heartRate.value).toBeLessThan(77);
  // Deleted from the bucket as soon as its job finished.
  expect(await inBucket(up.objectKey)).toBeUndefined();
  expect(localObjects()).toEqual([]);
}, 40_000);

test('a job whose hash does not match what the bucket holds is refused (the stored hash comes back from metadata)', async () => {
  const bytes = phantomFramesFile({ durationSec: 20, seed: 3 });
  const up = await presign(w);
  await put(w, up.uploadUrl, bytes);
  const res = await w.call({
    method: 'POST',
    url: '/sdk/v1/cloud/jobs',
    body: jobBody(up.objectKey, sha256(new Uint8Array([1]))),
  });
  expect(res.statusCode).toBe(422);
  expect(json(res).error.code).toBe('sha256_mismatch');
});

test('video job: the worker downloads the object to a local file for ffmpeg, and removes it after', async () => {
  const dir = fs.mkdtempSync(path.join(w.dataDir, 'video-src-'));
  const file = path.join(dir, 'short.mp4');
  execFileSync(resolveFfmpeg().ffmpeg, [
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc=duration=2:size=320x240:rate=30',
    '-pix_fmt',
    'yuv420p',
    file,
  ]);
  const job = await createJob(w, fs.readFileSync(file), { kind: 'video' });
  fs.rmSync(dir, { recursive: true, force: true });
  const done = await waitFor(w, job.jobId, ['completed', 'failed'], 30_000);
  // ffmpeg read the whole file: the media package judged it (2 s is too short), not "unreadable".
  expect(done.status).toBe('failed');
  expect(done.error_code).toBe('too_short');
  expect(tmpLeft()).toEqual([]);
}, 40_000);

test('session fallback upload goes to the bucket and its job completes', async () => {
  const s = await mintSession(w, { status: 'aborted', features: ['hrv'] });
  const res = await w.app.inject({
    method: 'POST',
    url: `/sdk/v1/cloud/sessions/${s.sessionId}/frames`,
    headers: { 'content-type': 'application/octet-stream', authorization: `Bearer ${s.token}` },
    payload: Buffer.from(phantomFramesFile({ durationSec: 20, seed: 5 })),
  });
  expect(res.statusCode).toBe(201);
  const done = await waitFor(w, json(res).data.jobId, ['completed', 'failed'], 30_000);
  expect(done.status).toBe('completed');
}, 40_000);

test('over the kind limit while streaming (no Content-Length) → 413, nothing in the bucket, no spool left', async () => {
  const up = await presign(w);
  const url = new URL(up.uploadUrl);
  await w.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (w.app.server.address() as { port: number }).port;
  const chunk = Buffer.alloc(1 << 20, 7);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent > FRAMES_MAX_BYTES + (4 << 20)) return c.close();
      sent += chunk.length;
      c.enqueue(chunk);
    },
  });
  const res = await fetch(`http://127.0.0.1:${port}${url.pathname}${url.search}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream' },
    body,
    duplex: 'half',
  } as RequestInit).catch((e: Error) => e);
  if (!(res instanceof Error)) {
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('object_too_large');
  }
  expect(await inBucket(up.objectKey)).toBeUndefined();
  expect(tmpLeft()).toEqual([]);
});

test('the sweeper: an object is deleted from the bucket one hour after presign', async () => {
  const up = await presign(w);
  await put(w, up.uploadUrl, new Uint8Array([9, 9, 9]));
  (w.clock as ManualClock).advance(3_599_000);
  await sweepOnce(w.ctx, w.rt);
  expect(await inBucket(up.objectKey)).toBeDefined();
  (w.clock as ManualClock).advance(2_000);
  await sweepOnce(w.ctx, w.rt);
  expect(await inBucket(up.objectKey)).toBeUndefined();
});

describe('orphans and a store that is away', () => {
  test('the sweep removes service objects without a live record, keeps live ones and other objects', async () => {
    // Upload TTL of 1 s, so that the safety net (real time, S3 LastModified) applies within the test.
    const ws = await createBatchWorld({
      env: { ...s3.env('sweep'), VITALS_UPLOAD_TTL_SEC: '1' },
      batch: { embeddedWorker: false },
    });
    try {
      const up = await presign(ws);
      await put(ws, up.uploadUrl, new Uint8Array([1, 2, 3]));
      const orphan = 'up_00000000000000000000000000000001';
      for (const Key of [`sweep/${orphan}`, 'sweep/not-ours.csv']) {
        await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body: 'x' }));
      }
      await new Promise((r) => setTimeout(r, 2_200)); // LastModified has whole seconds
      await sweepOnce(ws.ctx, ws.rt); // the manual clock has not moved: the live record stays
      expect(await inBucket(orphan, 'sweep')).toBeUndefined();
      expect(await inBucket(up.objectKey, 'sweep')).toBeDefined();
      const left = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'sweep/' }));
      expect((left.Contents ?? []).map((o) => o.Key).sort()).toEqual(['sweep/not-ours.csv', `sweep/${up.objectKey}`]);
    } finally {
      await ws.close();
      await (ws.rt.objects as S3ObjectStore).close();
    }
  }, 20_000);

  test('an unreachable store: PUT answers 503 service_unavailable with Retry-After (no crash, no secret), the service goes on', async () => {
    const wa = await createBatchWorld({
      env: { VITALS_OBJECTS_URL: 's3://away-bucket?endpoint=http://127.0.0.1:9', ...S3RVER_CREDENTIALS },
      batch: { embeddedWorker: false },
    });
    try {
      const up = await presign(wa);
      const res = await put(wa, up.uploadUrl, new Uint8Array(1000));
      expect(res.statusCode).toBe(503);
      expect(json(res).error.code).toBe('service_unavailable');
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body).not.toContain('S3RVER');
      expect(res.body).not.toContain('127.0.0.1');
      expect(res.body).not.toContain(new URL(up.uploadUrl).searchParams.get('sig')!);
      const again = await presign(wa);
      expect(again.objectKey).toMatch(/^up_/);
    } finally {
      await wa.close();
      await (wa.rt.objects as S3ObjectStore).close();
    }
  }, 20_000);
});

test('runJob by hand on S3 (the path `vitals-server worker` takes)', async () => {
  const wm = await createBatchWorld({ env: s3.env('manual'), batch: { embeddedWorker: false } });
  try {
    const job = await createJob(wm, phantomFramesFile({ durationSec: 20, seed: 11 }));
    await runJob(wm.ctx, wm.rt, job.jobId, 'manual-worker');
    expect((await waitFor(wm, job.jobId, ['completed', 'failed'])).status).toBe('completed');
  } finally {
    await wm.close();
    await (wm.rt.objects as S3ObjectStore).close();
  }
}, 40_000);

test('an object store that is away does not fail a job: it stays running, and a claim after its lease completes it', async () => {
  const clock = new ManualClock(Date.now());
  const wm = await createBatchWorld({ env: s3.env('outage'), batch: { embeddedWorker: false }, clock });
  const bucket = (wm.rt.objects as S3ObjectStore).settings.bucket;
  // The same bucket behind a port nothing listens on: every read is ECONNREFUSED.
  const away = new S3ObjectStore(
    parseObjectsUrl(`s3://${bucket}/outage?endpoint=http://127.0.0.1:9`, S3RVER_CREDENTIALS),
    path.join(wm.dataDir, 'away-tmp'),
  );
  const row = async () => (await getJob(wm.ctx.db.db, job.jobId))!;
  const job = await createJob(wm, phantomFramesFile({ durationSec: 20, seed: 12 }));
  try {
    await runJob(wm.ctx, { ...wm.rt, objects: away }, job.jobId, 'worker-during-outage');
    expect(await row()).toMatchObject({ status: 'running', attempts: 1, lease_owner: 'worker-during-outage' });
    // Its lease still holds: nobody else takes the job yet.
    await runJob(wm.ctx, wm.rt, job.jobId, 'too-early');
    expect(await row()).toMatchObject({ status: 'running', attempts: 1 });
    clock.advance(wm.rt.settings.leaseMs + 1);
    await runJob(wm.ctx, wm.rt, job.jobId, 'after-outage');
    expect((await waitFor(wm, job.jobId, ['completed', 'failed'])).status).toBe('completed');
    expect((await row()).attempts).toBe(2);
  } finally {
    await wm.close();
    await away.close();
    await (wm.rt.objects as S3ObjectStore).close();
  }
}, 60_000);
