/**
 * The acceptance path: a phantom pulse streamed in real time over a real socket ends in a
 * stored, attested cloud measurement whose heart rate matches the truth.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generatePhantom } from '@vitals/engine';
import { encodeFaceCrop, encodeTelemetry } from '@vitals/protocol';
import { getMeasurement } from '../src/store/measurements.js';
import { getMonthUsage, monthOf } from '../src/store/metering.js';
import type { TestKey, TestServer } from '../src/testing.js';
import {
  TestClient,
  createSession,
  jobOf,
  sendPaced,
  settledJob,
  signedFetch,
  startTestServer,
} from './stream-helpers.js';

/** Heart-rate tolerance against the phantom's truth (spectral resolution of a ~22 s capture). */
const HR_TOLERANCE_BPM = 3;
const CAPTURE_SEC = 22;

let srv: TestServer;
let key: TestKey;
beforeAll(async () => {
  srv = await startTestServer();
  key = await srv.createKey();
});
afterAll(() => srv.close());

describe('streaming a phantom in real time', () => {
  test('live hr events, then a final stored measurement matching the truth', { timeout: 60_000 }, async () => {
    const { packets, truth } = generatePhantom({
      heartRateBpm: 78,
      durationSec: CAPTURE_SEC,
      fps: 30,
      seed: 5,
      telemetry: true,
    });
    const s = await createSession(srv, key, { durationSec: 30, userRef: 'user-42', features: ['hrv', 'bp', 'spo2'] });
    expect(await jobOf(srv, s.sessionId)).toMatchObject({ jobId: s.sessionId, mode: 'stream', status: 'pending' });

    const { c, ready } = await TestClient.ready(s.wsUrl, s.sessionToken);
    expect(ready).toMatchObject({ sessionId: s.sessionId, acceptedFeatures: ['hrv', 'bp', 'spo2'] });
    const bytes = packets.map((p) => (p.type === 1 ? encodeFaceCrop(p) : encodeTelemetry(p as any)));
    await sendPaced(
      c,
      bytes,
      packets.map((p) => p.tMicros),
    );
    c.json({ t: 'ping' });
    await c.next('pong');
    c.json({ t: 'stop' });
    const final = await c.next('final', 15_000);
    const close = await c.closed;
    expect(close.code).toBe(1000);

    const hrs = c.events.filter((e) => e.t === 'hr');
    expect(hrs.length).toBeGreaterThanOrEqual(5);
    for (const e of hrs) expect(e.sqi).toBeGreaterThan(0.38);
    expect(Math.abs(hrs[hrs.length - 1].hr - truth.heartRateBpm)).toBeLessThanOrEqual(HR_TOLERANCE_BPM);
    expect(c.events.some((e) => e.t === 'stats')).toBe(true);
    expect(c.events.some((e) => e.t === 'error')).toBe(false);

    const m = final.measurement;
    expect(final.measurementId).toMatch(/^meas_[0-9a-f]{24}$/);
    expect(m).toMatchObject({
      id: final.measurementId,
      origin: 'cloud',
      attested: true,
      userRef: 'user-42',
      keyId: key.keyId,
    });
    expect(m.quality.level).not.toBe('poor');
    expect(Math.abs(m.cardiac.heartRate.value - truth.heartRateBpm)).toBeLessThanOrEqual(HR_TOLERANCE_BPM);
    expect(m.emotion).toBeUndefined(); // not ordered

    const job = await settledJob(srv, s.sessionId);
    expect(job).toMatchObject({
      jobId: s.sessionId,
      mode: 'stream',
      status: 'completed',
      measurementId: final.measurementId,
      userRef: 'user-42',
    });
    expect(job.framesProcessed).toBe(packets.filter((p) => p.type === 1).length);
    expect(job.startedAt).toBeGreaterThanOrEqual(job.createdAt);
    const stored = await getMeasurement(srv.ctx.db.db, key.keyId, final.measurementId);
    expect(stored?.doc).toEqual(m);
    const read = await signedFetch(srv, key, 'GET', `/sdk/v1/measurements/${final.measurementId}`);
    expect(read.json.data).toMatchObject({ origin: 'cloud', attested: true });

    // Metered once, at settlement: the seconds processed.
    const usage = await getMonthUsage(srv.ctx.db.db, key.keyId, monthOf(Date.now()));
    expect(usage.cloudSeconds).toBeCloseTo(job.secondsProcessed, 3);
    expect(job.secondsProcessed).toBeGreaterThan(CAPTURE_SEC - 1);
  });
});
