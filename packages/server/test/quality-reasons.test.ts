/**
 * Quality reasons (issue 17; docs/engine.md "Quality reasons"; docs/decisions.md "Quality
 * reasons") are stored and returned through every door: a frames job, a live session (the final
 * event and the stored record) and an on-device submission, whose reasons are bounded to the known
 * codes and carry the service's own hints.
 */
import { afterAll, beforeAll, describe, expect, test as plain } from 'vitest';
import { estimateOffline, generatePhantom } from '@vitals/engine';
import { encodeFramesFile, QUALITY_REASON_HINTS } from '@vitals/protocol';
import { runJob } from '../src/batch/worker.js';
import { getJob } from '../src/store/jobs.js';
import { getMeasurement } from '../src/store/measurements.js';
import type { TestKey, TestServer } from '../src/testing.js';
import { createBatchWorld, createJob, encodePacket, json as bjson, type BatchWorld } from './batch-world.js';
import { goodMeasurement, json, poorMeasurement, test } from './helpers.js';
import { createSession, settledJob, startTestServer, TestClient } from './stream-helpers.js';

/**
 * At most 30 crops a second, a ping after every 4th awaited (as doors-parity.test.ts does): the
 * server has read what came before, so its queue never drops a frame on a loaded machine (a run of
 * dropped frames would be a face_lost gap in the capture).
 */
async function sendInStep(c: TestClient, packets: ReturnType<typeof generatePhantom>['packets']): Promise<void> {
  const t0 = performance.now();
  let crops = 0;
  for (const p of packets) {
    if (p.type === 1) {
      const wait = crops * 34 - (performance.now() - t0);
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      crops++;
    }
    for (const bytes of encodePacket(p)) c.bin(bytes);
    if (p.type === 1 && crops % 4 === 0) {
      c.json({ t: 'ping' });
      const until = Date.now() + 5000;
      while (c.events.filter((e) => e.t === 'pong').length < crops / 4) {
        if (Date.now() > until) throw new Error(`no pong after ${crops} crops`);
        await new Promise((r) => setTimeout(r, 2));
      }
    }
  }
}

let w: BatchWorld;
let srv: TestServer;
let key: TestKey;
beforeAll(async () => {
  [w, srv] = await Promise.all([createBatchWorld(), startTestServer()]);
  key = await srv.createKey();
});
afterAll(async () => {
  await Promise.all([w?.close(), srv?.close()]);
});

describe('quality reasons through the cloud doors', () => {
  plain('a frames job stores the engine’s reasons and GET returns them', { timeout: 60_000 }, async () => {
    // A 12 fps camera: low_frame_rate, whatever the gate decides.
    const { packets } = generatePhantom({ durationSec: 15, fps: 12, heartRateBpm: 70, seed: 5 });
    const expected = estimateOffline(packets).quality.reasons;
    expect(expected.map((r) => r.code)).toContain('low_frame_rate');
    const job = await createJob(w, encodeFramesFile(packets.flatMap(encodePacket), 15e6));
    await runJob(w.ctx, w.rt, job.jobId, 'reasons');
    const row = (await getJob(w.ctx.db.db, job.jobId))!;
    expect(row.status).toBe('completed');
    const stored = (await getMeasurement(w.ctx.db.db, row.key_id, row.measurement_id!))!;
    expect(stored.doc.quality?.reasons).toEqual(expected);
    const got = bjson(await w.call({ url: `/sdk/v1/measurements/${row.measurement_id}` })).data;
    expect(got.quality.reasons).toEqual(expected);
    for (const r of got.quality.reasons) expect(r.hint).toBe(QUALITY_REASON_HINTS[r.code as 'too_short']);
  });

  plain('a live session sends them in `final` and stores the same', { timeout: 60_000 }, async () => {
    const { packets } = generatePhantom({ durationSec: 12, pulseAmplitude: 0, seed: 8 });
    const s = await createSession(srv, key, { durationSec: 30 });
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    await sendInStep(c, packets);
    c.json({ t: 'stop' });
    const final = await c.next('final', 15_000);
    const job = await settledJob(srv, s.sessionId);
    expect(job.stats.stream).toMatchObject({ dropped: 0 });
    expect(final.measurement.quality.reasons).toEqual(estimateOffline(packets).quality.reasons);
    const reasons = final.measurement.quality.reasons;
    // 12 s with nothing published: too short to show a pulse (the shortness explains it, not no_pulse).
    expect(reasons.map((r: { code: string }) => r.code)).toEqual(['too_short']);
    const stored = (await getMeasurement(srv.ctx.db.db, key.keyId, final.measurementId))!;
    expect(stored.doc.quality?.reasons).toEqual(reasons);
  });

  plain('a live session whose first crop comes 12 s after its start says face_lost', { timeout: 60_000 }, async () => {
    // Packets are timed from the session's start (spec) and the tracker sends crops only while it
    // follows a face: 12 s without a crop, then 12 s with one, is half the capture without a face
    // (the engine counts the time before the first crop, through every door).
    const { packets } = generatePhantom({ durationSec: 24, heartRateBpm: 70, seed: 9 });
    const late = packets.filter((p) => p.tMicros >= 12e6);
    const s = await createSession(srv, key, { durationSec: 30 });
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    await sendInStep(c, late);
    c.json({ t: 'stop' });
    const final = await c.next('final', 15_000);
    const lost = final.measurement.quality.reasons.find((r: { code: string }) => r.code === 'face_lost');
    expect(lost?.value).toBeCloseTo(0.5, 1);
    expect(lost?.hint).toBe(QUALITY_REASON_HINTS.face_lost);
    expect(final.measurement.quality.reasons).toEqual(estimateOffline(late).quality.reasons);
    // A session from its start: no face_lost.
    expect(estimateOffline(packets).quality.reasons.map((r) => r.code)).not.toContain('face_lost');
  });
});

const POST = { method: 'POST', url: '/sdk/v1/measurements' } as const;

describe('on-device submissions', () => {
  test('known codes are stored with the service’s hints, the value kept', async ({ world }) => {
    const quality = {
      level: 'poor',
      score: 0.1,
      usable: false,
      reasons: [
        { code: 'motion', hint: 'Visit evil.example to fix your camera', value: 0.6 },
        { code: 'low_light', hint: '' },
      ],
    };
    const res = await world.call({ ...POST, body: poorMeasurement({ quality }) });
    expect(res.statusCode).toBe(201);
    const want = [
      { code: 'motion', hint: QUALITY_REASON_HINTS.motion, value: 0.6 },
      { code: 'low_light', hint: QUALITY_REASON_HINTS.low_light },
    ];
    expect(json(res).data.quality.reasons).toEqual(want);
    const got = json(await world.call({ url: `/sdk/v1/measurements/${json(res).data.id}` })).data;
    expect(got.quality.reasons).toEqual(want);
  });

  test('a submission without reasons stays without (the field is optional)', async ({ world }) => {
    const res = await world.call({ ...POST, body: goodMeasurement() });
    expect(res.statusCode).toBe(201);
    expect(json(res).data.quality).not.toHaveProperty('reasons');
  });

  const q = (reasons: unknown) => ({ level: 'good', score: 0.9, usable: true, reasons });
  test('a well-formed code this server does not know (a newer client) is dropped, not refused', async ({ world }) => {
    const reasons = [
      { code: 'bad_hair', hint: 'x', value: 3 },
      { code: 'motion', hint: 'y', value: 0.5 },
    ];
    const res = await world.call({ ...POST, body: goodMeasurement({ quality: q(reasons) }) });
    expect(res.statusCode).toBe(201);
    const want = [{ code: 'motion', hint: QUALITY_REASON_HINTS.motion, value: 0.5 }];
    expect(json(res).data.quality.reasons).toEqual(want);
    const got = json(await world.call({ url: `/sdk/v1/measurements/${json(res).data.id}` })).data;
    expect(got.quality.reasons).toEqual(want);
  });

  test.for<[string, unknown]>([
    ['a code that is not a lower-case word', [{ code: 'Bad Hair!', hint: 'x' }]],
    ['a code over 64 characters', [{ code: 'x'.repeat(65), hint: 'x' }]],
    [
      'an unknown code twice',
      [
        { code: 'bad_hair', hint: 'x' },
        { code: 'bad_hair', hint: 'y' },
      ],
    ],
    [
      'a code twice',
      [
        { code: 'motion', hint: 'x' },
        { code: 'motion', hint: 'y' },
      ],
    ],
    ['more than 32 items', Array.from({ length: 33 }, (_, i) => ({ code: `code_${i}`, hint: 'x' }))],
    ['a hint over 200 characters', [{ code: 'motion', hint: 'x'.repeat(201) }]],
    ['a value that is not a number', [{ code: 'motion', hint: 'x', value: '0.5' }]],
    ['no code', [{ hint: 'x' }]],
    ['not an array', { code: 'motion', hint: 'x' }],
  ])('.error: %s is a validation_error', async ([, reasons], { world }) => {
    const res = await world.call({ ...POST, body: goodMeasurement({ quality: q(reasons) }) });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });
});
