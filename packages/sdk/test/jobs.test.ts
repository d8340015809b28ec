/**
 * The batch tier through the SDK against the real server: presign, PUT with progress, job
 * creation rules (idempotency, sha256, content types), wait until terminal, submit().
 * Skipped, visibly, while the server has no presign route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePhantom } from '@vitals/engine';
import { encodeFaceCrop, sha256Hex } from '@vitals/protocol';
import { ApiError, FramesWriter, VitalsClient } from '@vitals/sdk';
import { routeExists, startTestServer, type TestServer } from './support/server.js';

const probe = await startTestServer();
const present = await routeExists(probe.baseUrl, 'POST', '/sdk/v1/cloud/uploads/presign');
await probe.close();
if (!present) console.warn('jobs.test.ts: skipped, the server has no batch tier yet');

function phantomFile(seconds: number, seed = 3): Uint8Array {
  const { packets } = generatePhantom({ heartRateBpm: 66, durationSec: seconds, fps: 30, seed });
  const w = new FramesWriter();
  for (const p of packets) if (p.type === 1) w.addPacket(encodeFaceCrop(p));
  return w.toBytes();
}

describe.skipIf(!present)('batch jobs through the SDK', () => {
  let server: TestServer;
  let vitals: VitalsClient;
  beforeAll(async () => {
    server = await startTestServer();
    vitals = new VitalsClient({ ...(await server.createKey()), baseUrl: server.baseUrl });
  });
  afterAll(async () => {
    await server?.close();
  });

  it(
    'presign → put (progress) → create → wait: a frames job completes with an attested measurement',
    { timeout: 120_000 },
    async () => {
      const file = phantomFile(22);
      const sha256 = await sha256Hex(file);
      const upload = await vitals.uploads.presign({ kind: 'frames' });
      expect(upload).toMatchObject({ contentType: 'application/octet-stream', maxBytes: 67108864 });
      expect(upload.objectKey).toMatch(/^up_/);
      const progress: number[] = [];
      await vitals.uploads.put(upload, file, { onProgress: (p) => progress.push(p.loaded) });
      expect(progress[0]).toBe(0);
      expect(progress[progress.length - 1]).toBe(file.length);
      const job = await vitals.jobs.create({
        objectKey: upload.objectKey,
        kind: 'frames',
        sha256,
        idempotencyKey: `test-${sha256}`,
        consent: true,
        userRef: 'batch-user',
      });
      // The spec: a new job answers 201 with status `queued`, even when a worker picks it up at once.
      expect(job.status).toBe('queued');
      expect(job.jobId).toMatch(/^cj_/);
      const seen: string[] = [];
      const done = await vitals.jobs.wait(job.jobId, {
        intervalMs: 250,
        timeoutMs: 100_000,
        onPoll: (j) => seen.push(j.status),
      });
      expect(seen[seen.length - 1]).toBe('completed');
      expect(done).toMatchObject({ status: 'completed', mode: 'batch_frames', userRef: 'batch-user' });
      expect(done.measurement).toMatchObject({ origin: 'cloud', attested: true });
      expect(Math.abs(done.measurement!.cardiac!.heartRate!.value - 66)).toBeLessThanOrEqual(3);

      // the same idempotency key and sha256 returns the same job; another sha256 is a conflict
      const again = await vitals.jobs.create({
        objectKey: upload.objectKey,
        kind: 'frames',
        sha256,
        idempotencyKey: `test-${sha256}`,
        consent: true,
      });
      expect(again.jobId).toBe(job.jobId);
      const other = await vitals.uploads.presign({ kind: 'frames' });
      await vitals.uploads.put(other, phantomFile(1, 9));
      await expect(
        vitals.jobs.create({
          objectKey: other.objectKey,
          kind: 'frames',
          sha256: await sha256Hex(phantomFile(1, 9)),
          idempotencyKey: `test-${sha256}`,
          consent: true,
        }),
      ).rejects.toMatchObject({ code: 'idempotency_conflict', status: 409 });
    },
  );

  it('jobs.submit does presign, put and create in one call', { timeout: 120_000 }, async () => {
    const job = await vitals.jobs.submit({ kind: 'frames', body: phantomFile(21, 4), consent: true });
    expect(job.status).toBe('queued');
    const done = await vitals.jobs.wait(job.jobId, { intervalMs: 250 });
    expect(done.status).toBe('completed');
  });

  it('the spec refusals arrive as ApiErrors', async () => {
    await expect(
      vitals.uploads.presign({ kind: 'video', contentType: 'application/octet-stream' }),
    ).rejects.toMatchObject({
      code: 'invalid_content_type',
      status: 400,
    });
    const file = phantomFile(1, 5);
    const up = await vitals.uploads.presign({ kind: 'frames' });
    await vitals.uploads.put(up, file);
    const base = {
      objectKey: up.objectKey,
      kind: 'frames' as const,
      sha256: await sha256Hex(file),
      consent: true as const,
    };
    await expect(vitals.jobs.create({ ...base, idempotencyKey: 'short' })).rejects.toMatchObject({
      code: 'validation_error',
    });
    await expect(
      vitals.jobs.create({ ...base, idempotencyKey: 'k'.repeat(20), consent: false as true }),
    ).rejects.toMatchObject({ code: 'consent_required' });
    await expect(
      vitals.jobs.create({ ...base, idempotencyKey: 'k'.repeat(21), objectKey: 'up_' + '0'.repeat(32) }),
    ).rejects.toMatchObject({
      code: 'object_not_found',
      status: 404,
    });
    await expect(
      vitals.jobs.create({ ...base, idempotencyKey: 'k'.repeat(22), sha256: '0'.repeat(64) }),
    ).rejects.toMatchObject({
      code: 'sha256_mismatch',
      status: 422,
    });
  });

  it('a local size check refuses what the slot would refuse, without sending', async () => {
    const up = await vitals.uploads.presign({ kind: 'frames' });
    await expect(vitals.uploads.put({ ...up, maxBytes: 10 }, new Uint8Array(11))).rejects.toMatchObject({
      code: 'object_too_large',
    });
  });

  it('a failed PUT is an ApiError that does not quote the upload URL', async () => {
    const up = await vitals.uploads.presign({ kind: 'frames' });
    const err = (await vitals.uploads
      .put({ ...up, uploadUrl: up.uploadUrl + 'tampered' }, new Uint8Array(64))
      .catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBeGreaterThanOrEqual(400);
    expect(err.message).not.toContain(up.uploadUrl);
    expect(String(err.stack)).not.toContain(up.uploadUrl);
  });
});
