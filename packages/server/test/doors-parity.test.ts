/**
 * One estimator, one rule for its result (domain/measurement-fields.ts): the same packets give the
 * same stored measurement whether they arrive as a frames job or over a live WebSocket session
 * (issue 14). Everything but the identity of the record (id, source, key, times) must match:
 * quality, completeness, duration, every metric, and the frames and seconds the job was billed for.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { generatePhantom, type PhantomOptions } from '@vitals/engine';
import { encodeFramesFile } from '@vitals/protocol';
import { getJob } from '../src/store/jobs.js';
import { getMeasurement } from '../src/store/measurements.js';
import type { TestKey, TestServer } from '../src/testing.js';
import { runJob } from '../src/batch/worker.js';
import { createBatchWorld, createJob, encodePacket, type BatchWorld } from './batch-world.js';
import { TestClient, createSession, settledJob, startTestServer } from './stream-helpers.js';

type Packets = ReturnType<typeof generatePhantom>['packets'];

/**
 * Every packet, at most 30 face crops per second (the wall-clock rule), and a ping after every 4th
 * crop whose pong is awaited: the server has then read the crops before it, and its scheduler, which
 * processes at least 4 frames a turn, runs between two reads. So the 15-frame queue never
 * overflows, even on a loaded machine, and the live capture is the file's capture.
 */
async function sendInStep(c: TestClient, packets: Packets): Promise<void> {
  const t0 = performance.now();
  const pongs = (): number => c.events.filter((e) => e.t === 'pong').length;
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
      while (pongs() < crops / 4) {
        if (Date.now() > until) throw new Error(`no pong after ${crops} crops`);
        await new Promise((r) => setTimeout(r, 2));
      }
    }
  }
}

const FEATURES = ['hrv', 'bp', 'spo2'];
/** Identity of the record, which differs by door by design. */
const IDENTITY = ['id', 'requestId', 'source', 'keyId', 'createdAt'];

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

async function viaFramesJob(packets: Packets, durationSec: number) {
  const file = encodeFramesFile(packets.flatMap(encodePacket), durationSec * 1e6);
  const job = await createJob(w, file, { features: FEATURES });
  await runJob(w.ctx, w.rt, job.jobId, 'parity');
  const row = (await getJob(w.ctx.db.db, job.jobId))!;
  expect(row.status).toBe('completed');
  const stored = (await getMeasurement(w.ctx.db.db, row.key_id, row.measurement_id!))!;
  return {
    doc: stored.doc as Record<string, unknown>,
    raw: stored.raw,
    frames: row.frames_processed,
    seconds: row.seconds_processed,
  };
}

async function viaSession(packets: Packets) {
  const s = await createSession(srv, key, { durationSec: 30, features: FEATURES });
  const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
  await sendInStep(c, packets);
  c.json({ t: 'stop' });
  const final = await c.next('final', 15_000);
  const job = await settledJob(srv, s.sessionId);
  // A frame dropped on the way (the server fell behind) would make the captures differ.
  expect(job.stats.stream).toMatchObject({ dropped: 0, processed: packets.filter((p) => p.type === 1).length });
  const stored = (await getMeasurement(srv.ctx.db.db, key.keyId, final.measurementId))!;
  expect(stored.doc).toEqual(final.measurement);
  return {
    doc: stored.doc as Record<string, unknown>,
    raw: stored.raw,
    frames: job.framesProcessed,
    seconds: job.secondsProcessed,
  };
}

const withoutIdentity = (doc: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(doc).filter(([k]) => !IDENTITY.includes(k)));

test.each<[string, PhantomOptions]>([
  // 20 s: a 12 s capture holds too few windows to show a pulse at the gate's 0.1 % level (docs/engine.md, step 8).
  ['a pulse', { heartRateBpm: 72, durationSec: 20, fps: 30, seed: 11, telemetry: true }],
  ['a face without pulse (poor)', { pulseAmplitude: 0, noiseStd: 6, durationSec: 12, fps: 30, seed: 3 }],
])('%s: a frames job and a live session store the same measurement', { timeout: 60_000 }, async (_, opts) => {
  const { packets } = generatePhantom(opts);
  // One after the other: a busy CPU must not make the socket drop frames.
  const batch = await viaFramesJob(packets, opts.durationSec!);
  const stream = await viaSession(packets);
  expect(batch.doc.source).toBe('cloud_frames');
  expect(stream.doc.source).toBe('cloud_stream');
  expect(withoutIdentity(stream.doc)).toEqual(withoutIdentity(batch.doc));
  expect(stream.raw).toBeNull();
  expect(batch.raw).toBeNull();
  expect(stream.frames).toBe(batch.frames);
  expect(stream.seconds).toBe(batch.seconds);
  if (opts.pulseAmplitude === 0) {
    expect(batch.doc).toMatchObject({
      isComplete: false,
      quality: { level: 'poor' },
      hrv: null,
      cardiac: { heartRate: null },
    });
  } else {
    expect(batch.doc).toMatchObject({ isComplete: true, quality: { usable: true } });
  }
});
