/**
 * Batch processing (spec: Cloud job; States and transitions; Frames file; Video rejections;
 * CLARIFICATIONS 19, 21, 22): frames and videos through the offline estimator to a stored, attested
 * measurement; header failures; expiry by the object sweep; supersede races; metering exactly once;
 * resumption after a process dies (in-process here, a killed worker process in batch-kill.test.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveFfmpeg } from '@vitals/media';
import { FRAMES_HEADER_BYTES } from '@vitals/protocol';
import {
  createBatchWorld,
  createJob,
  json,
  phantomFramesFile,
  usageOf,
  waitFor,
  type BatchWorld,
  ManualClock,
} from './batch-world.js';
import { runJob, sweepOnce } from '../src/batch/index.js';
import { getJob } from '../src/store/jobs.js';
import { costMicro } from '../src/domain/pricing.js';
import { getOrg } from '../src/store/orgs-keys.js';
import { createEndpoint } from '../src/webhooks/endpoints.js';

let w: BatchWorld;
beforeAll(async () => {
  w = await createBatchWorld({ batch: { embeddedWorker: false } });
});
afterAll(async () => w.close());

const run = (jobId: string, owner = 'test-worker') => runJob(w.ctx, w.rt, jobId, owner);
const wire = async (jobId: string) => json(await w.call({ url: `/sdk/v1/cloud/jobs/${jobId}` })).data;

describe('frames jobs', () => {
  test('queued → running → completed: attested cloud measurement, frames and seconds, object deleted, metered once', async () => {
    const balance0 = (await getOrg(w.ctx.db.db, w.key.orgId))!.tokenBalanceMicro!;
    const job = await createJob(w, phantomFramesFile({ durationSec: 30, heartRateBpm: 75 }), {
      userRef: 'athlete-7',
      features: ['hrv', 'bp'],
    });
    expect(job.status).toBe('queued');
    (w.clock as ManualClock).advance(1000);
    await run(job.jobId);
    const done = await wire(job.jobId);
    expect(done.status).toBe('completed');
    expect(done.framesProcessed).toBe(900);
    expect(done.secondsProcessed).toBeCloseTo(30, 0);
    expect(done.startedAt).toBe(w.clock.now());
    expect(done.finishedAt).toBe(w.clock.now());
    expect(done.userRef).toBe('athlete-7');
    expect(done.measurementId).toMatch(/^meas_/);
    expect(done.measurement).toMatchObject({
      id: done.measurementId,
      origin: 'cloud',
      attested: true,
      userRef: 'athlete-7',
      keyId: w.key.keyId,
    });
    expect(done.measurement.cardiac.heartRate.value).toBeGreaterThan(70);
    expect(done.measurement.cardiac.heartRate.value).toBeLessThan(80);
    expect(done.measurement.hrv).toBeDefined();
    expect(done.measurement.bloodPressure).toBeDefined();
    expect(done.measurement.spo2).toBeUndefined(); // not ordered
    expect(done.measurement.raw).toBeUndefined();
    // The engine's diagnostics come through the documented JobStats schema whole (the response
    // serializer drops what a schema does not name, so this holds the schema to the engine).
    expect(done.stats.engine).toMatchObject({ framesUsed: 900, pulseMethod: expect.any(String) });
    expect(Object.keys(done.stats.engine)).toEqual(
      expect.arrayContaining([
        'framesDropped',
        'meanFps',
        'sampleRateHz',
        'medianSqi',
        'skinFraction',
        'internalHeartRateBpm',
        'anchorShare',
        'beatsDetected',
      ]),
    );
    // The same measurement through the measurements endpoint.
    const m = await w.call({ url: `/sdk/v1/measurements/${done.measurementId}` });
    expect(json(m).data.origin).toBe('cloud');
    // Deleted as soon as its job finished.
    const row = (await getJob(w.ctx.db.db, job.jobId))!;
    expect(await w.rt.objects.stat(row.object_key!)).toBeUndefined();
    // Metered once: seconds and tokens on the key, tokens off the balance.
    const usage = await usageOf(w, w.key.keyId);
    const cost = costMicro(row.seconds_processed, ['hrv', 'bp']);
    expect(usage.seconds).toBeCloseTo(row.seconds_processed, 3);
    expect(usage.tokens).toBe(cost);
    expect((await getOrg(w.ctx.db.db, w.key.orgId))!.tokenBalanceMicro).toBe(balance0 - cost);
    // Running it again does nothing (already settled).
    await run(job.jobId);
    expect((await usageOf(w, w.key.keyId)).tokens).toBe(cost);
  });

  test('a face without pulse completes poor: quality present, every metric null', async () => {
    const job = await createJob(w, phantomFramesFile({ durationSec: 20, pulseAmplitude: 0, noiseStd: 6 }));
    await run(job.jobId);
    const done = await wire(job.jobId);
    expect(done.status).toBe('completed');
    expect(done.measurement.quality.level).toBe('poor');
    expect(done.measurement.isComplete).toBe(false);
    expect(done.measurement.cardiac.heartRate).toBeNull();
  });

  const good = (): Uint8Array => phantomFramesFile({ durationSec: 20 });
  const patched = (f: (b: Uint8Array, dv: DataView) => void): Uint8Array => {
    const b = new Uint8Array(good());
    f(b, new DataView(b.buffer));
    return b;
  };
  test.each([
    ['wrong magic', () => patched((b) => (b[0] = 0x58)), /magic/],
    ['version 2', () => patched((b) => (b[8] = 2)), /version/],
    ['packet count too high', () => patched((_b, dv) => dv.setUint32(12, dv.getUint32(12, true) + 1, true)), /packets/],
    ['packet count too low', () => patched((_b, dv) => dv.setUint32(12, 5, true)), /packets/],
    ['duration zero', () => patched((_b, dv) => dv.setBigUint64(16, 0n, true)), /duration/],
    ['duration shorter than the packets', () => patched((_b, dv) => dv.setBigUint64(16, 5_000_000n, true)), /duration/],
    ['duration over an hour', () => patched((_b, dv) => dv.setBigUint64(16, 3_700_000_000n, true)), /hour/],
    ['truncated last packet', () => good().subarray(0, good().length - 100), /truncated|packet/],
    ['header only', () => good().subarray(0, FRAMES_HEADER_BYTES), /packets|face/],
    ['shorter than a header', () => new Uint8Array(10), /header/],
  ])('%s: accepted (201), then failed with invalid_frames_file', async (_name, bytes, message) => {
    const job = await createJob(w, bytes());
    expect(job.status).toBe('queued');
    await run(job.jobId);
    const done = await wire(job.jobId);
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('invalid_frames_file');
    expect(done.error.message).toMatch(message);
    expect(done.measurement).toBeUndefined();
    expect(await w.rt.objects.stat((await getJob(w.ctx.db.db, job.jobId))!.object_key!)).toBeUndefined();
  });
});

describe('video jobs (the media package decides; its rejection is the job error)', () => {
  const dir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'vitals-video-'));
  const make = (name: string, args: string[]): Uint8Array => {
    const out = path.join(dir, name);
    execFileSync(resolveFfmpeg().ffmpeg, ['-loglevel', 'error', '-y', ...args, out]);
    return fs.readFileSync(out);
  };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test.each([
    ['not a video', 'unsupported_media', () => new Uint8Array(5000).fill(3)],
    [
      '2 s long',
      'too_short',
      () => make('short.mp4', ['-f', 'lavfi', '-i', 'testsrc=duration=2:size=320x240:rate=30', '-pix_fmt', 'yuv420p']),
    ],
    [
      '25 s at 10 fps',
      'insufficient_frame_rate',
      () => make('slow.mp4', ['-f', 'lavfi', '-i', 'testsrc=duration=25:size=320x240:rate=10', '-pix_fmt', 'yuv420p']),
    ],
  ])('%s → failed %s', async (_name, code, bytes) => {
    const job = await createJob(w, bytes(), { kind: 'video' });
    expect(job.mode).toBe('batch_video');
    await run(job.jobId);
    const done = await wire(job.jobId);
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe(code);
  });
});

describe('expiry', () => {
  test('object swept before the job ran → expired (object_expired), organization webhook cloud.job.expired journaled', async () => {
    const ep = await createEndpoint(
      { ...w.ctx, config: { ...w.ctx.config, webhookAllowHosts: [] } },
      w.key.orgId,
      'https://hooks.example.com/vitals',
    );
    const job = await createJob(w, phantomFramesFile({ durationSec: 20 }));
    (w.clock as ManualClock).advance(3_600_001);
    const swept = await sweepOnce(w.ctx, w.rt);
    expect(swept.expiredJobs).toBe(1);
    const done = await wire(job.jobId);
    expect(done.status).toBe('expired');
    expect(done.error.code).toBe('object_expired');
    const deliveries = await w.ctx.db.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('job_id', '=', job.jobId)
      .execute();
    expect(deliveries.map((d) => [d.event, d.endpoint_id])).toEqual([['cloud.job.expired', ep.id]]);
    await w.ctx.db.db.updateTable('webhook_endpoints').set({ status: 'deleted' }).where('id', '=', ep.id).execute();
  });

  test('a job that was running keeps going when its object is swept; re-running after a crash finds it expired', async () => {
    const job = await createJob(w, phantomFramesFile({ durationSec: 20 }));
    // A worker claimed it, then died (lease in the past); the sweep removes the object meanwhile.
    await w.ctx.db.db
      .updateTable('cloud_jobs')
      .set({ status: 'running', lease_owner: 'dead', lease_until: w.clock.now() - 1, attempts: 1 })
      .where('id', '=', job.jobId)
      .execute();
    (w.clock as ManualClock).advance(3_600_001);
    await sweepOnce(w.ctx, w.rt);
    expect((await getJob(w.ctx.db.db, job.jobId))!.status).toBe('running');
    await run(job.jobId);
    expect((await wire(job.jobId)).status).toBe('expired');
  });
});

describe('exactly once', () => {
  test('two workers racing for one job: one claim, one measurement, metered once', async () => {
    const k = await w.newKey();
    const job = await createJob(w, phantomFramesFile({ durationSec: 20 }), {}, k);
    await Promise.all([run(job.jobId, 'a'), run(job.jobId, 'b'), run(job.jobId, 'c')]);
    const row = (await getJob(w.ctx.db.db, job.jobId))!;
    expect(row.status).toBe('completed');
    expect(row.attempts).toBe(1);
    const ms = await w.ctx.db.db.selectFrom('measurements').select('id').where('key_id', '=', k.keyId).execute();
    expect(ms).toHaveLength(1);
    expect((await usageOf(w, k.keyId)).seconds).toBeCloseTo(row.seconds_processed, 3);
  });

  test('a job superseded while running: the worker loses the settle, no measurement, not metered', async () => {
    const slow = await createBatchWorld({ batch: { testJobDelayMs: 400 } });
    try {
      const job = await createJob(slow, phantomFramesFile({ durationSec: 20 }));
      const running = runJob(slow.ctx, slow.rt, job.jobId, 'w1');
      await waitFor(slow, job.jobId, ['running']);
      const res = await createJob(slow, phantomFramesFile({ durationSec: 20 }), { supersedes: job.jobId });
      await running;
      const row = (await getJob(slow.ctx.db.db, job.jobId))!;
      expect(row.status).toBe('aborted');
      expect(row.error_code).toBe('superseded');
      expect(row.superseded_by).toBe(res.jobId);
      expect(row.measurement_id).toBeNull();
      expect((await usageOf(slow, slow.key.keyId)).seconds).toBe(0);
    } finally {
      await slow.close();
    }
  });

  test('a worker that crashed after claiming: the job is resumed once its lease runs out', async () => {
    const job = await createJob(w, phantomFramesFile({ durationSec: 20 }));
    await w.ctx.db.db
      .updateTable('cloud_jobs')
      .set({ status: 'running', lease_owner: 'dead', lease_until: w.clock.now() + 30_000, attempts: 1 })
      .where('id', '=', job.jobId)
      .execute();
    await run(job.jobId, 'alive');
    expect((await getJob(w.ctx.db.db, job.jobId))!.status).toBe('running'); // lease still held
    (w.clock as ManualClock).advance(30_001);
    await run(job.jobId, 'alive');
    const row = (await getJob(w.ctx.db.db, job.jobId))!;
    expect(row.status).toBe('completed');
    expect(row.attempts).toBe(2);
  });

  test('a job claimed more than 3 times without settling fails internal_error', async () => {
    const job = await createJob(w, phantomFramesFile({ durationSec: 20 }));
    await w.ctx.db.db
      .updateTable('cloud_jobs')
      .set({ status: 'running', lease_owner: 'dead', lease_until: w.clock.now() - 1, attempts: 3 })
      .where('id', '=', job.jobId)
      .execute();
    await run(job.jobId);
    const done = await wire(job.jobId);
    expect(done.status).toBe('failed');
    expect(done.error.code).toBe('internal_error');
  });
});

test('embedded worker: a job left queued by a previous process is resumed at startup', async () => {
  const first = await createBatchWorld({ batch: { embeddedWorker: false } });
  const job = await createJob(first, phantomFramesFile({ durationSec: 20 }));
  // "Restart": a new context on the same database and data dir, with the embedded worker on.
  const { createContext, closeContext } = await import('../src/deps.js');
  const { loadConfig } = await import('../src/config.js');
  const ctx2 = await createContext(loadConfig({ VITALS_DATA_DIR: first.dataDir }), {
    clock: first.clock,
    db: first.ctx.db,
    env: {},
    batch: { pollMs: 50 },
  });
  const w2 = await ctx2.batch!.startWorker();
  try {
    const done = await waitFor(first, job.jobId, ['completed'], 20_000);
    expect(done.lease_owner).toBeNull();
    expect(w2.owner).toContain(String(process.pid));
  } finally {
    await w2.stop();
    ctx2.onClose.length = 0; // shares first's database handle
    void closeContext;
    await first.close();
  }
});
