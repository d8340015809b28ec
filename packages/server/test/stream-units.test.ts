/**
 * The streaming building blocks on their own: the frame-rate guard, aux reassembly, the bounded
 * queue (overflow drops the oldest and reports `stats`), and emotion/gaze with a stand-in analyzer.
 */
import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeAuxChunks, signRequest, type AuxChunkPacket } from '@vitals/protocol';
import { FrameRateGuard } from '../src/stream/rate-guard.js';
import { AuxAssembler, MAX_SETS } from '../src/stream/aux-assembler.js';
import { StreamConnection } from '../src/stream/connection.js';
import { setAuxAnalyzerForTests } from '../src/stream/aux-models.js';
import { createTestApp, waitFor, type TestApp } from '../src/testing.js';
import { TestClient, createSession, crop, settledJob, startTestServer } from './stream-helpers.js';

describe('FrameRateGuard', () => {
  test('32 frames in a one-second span pass, the 33rd fails', () => {
    const g = new FrameRateGuard(0);
    for (let i = 0; i < 32; i++) expect(g.admit(i * 30_000, 10_000)).toBeNull();
    expect(g.admit(32 * 30_000, 10_000)).toMatch(/capture time/);
  });

  test('a steady 30 fps runs forever at real time', () => {
    const g = new FrameRateGuard(0);
    for (let i = 0; i < 3000; i++) expect(g.admit(i * 33_333, i * 33.333)).toBeNull();
  });

  test('wall clock: 64 at once pass, then only 32 per second', () => {
    const g = new FrameRateGuard(0);
    for (let i = 0; i < 64; i++) expect(g.admit(i * 1_000_000, 0)).toBeNull();
    expect(g.admit(64 * 1_000_000, 0)).toMatch(/wall clock/);
    expect(g.admit(64 * 1_000_000, 1000)).toBeNull();
  });
});

function chunk(tMicros: number, chunkIndex: number, chunkCount: number, bytes: number[]): AuxChunkPacket {
  const payload = Uint8Array.from(bytes);
  return {
    type: 4,
    tMicros,
    chunkIndex,
    chunkCount,
    width: 448,
    height: 448,
    flags: 0,
    byteLength: payload.length,
    payload,
  };
}

describe('AuxAssembler', () => {
  test('reassembles a set whose chunks arrive out of order', () => {
    const a = new AuxAssembler();
    expect(a.add(chunk(5, 1, 2, [3, 4]), 0)).toBeNull();
    expect(a.add(chunk(5, 0, 2, [1, 2]), 10)).toEqual({ jpeg: Uint8Array.of(1, 2, 3, 4), tMicros: 5 });
    expect(a.pendingSets).toBe(0);
  });

  test('an incomplete set is dropped silently after 2 s', () => {
    const a = new AuxAssembler();
    a.add(chunk(5, 0, 2, [1]), 0);
    a.sweep(2001);
    expect(a.pendingSets).toBe(0);
    expect(a.dropped).toBe(1);
    expect(a.add(chunk(5, 1, 2, [2]), 2002)).toBeNull(); // a late chunk starts over, never completes the old set
  });

  test(`at most ${MAX_SETS} sets in flight: the oldest makes room`, () => {
    const a = new AuxAssembler();
    for (let t = 0; t < MAX_SETS + 3; t++) a.add(chunk(t, 0, 2, [t]), t);
    expect(a.pendingSets).toBe(MAX_SETS);
    expect(a.dropped).toBe(3);
  });

  test('a chunk contradicting its set (another chunkCount) is an error', () => {
    const a = new AuxAssembler();
    a.add(chunk(5, 0, 2, [1]), 0);
    expect(a.add(chunk(5, 1, 3, [2]), 1)).toMatchObject({ error: expect.stringMatching(/chunkCount/) });
  });

  test('a set over 256 KB is dropped', () => {
    const a = new AuxAssembler();
    const big = new Array(8000).fill(1);
    for (let i = 0; i < 40; i++) expect(a.add(chunk(9, i, 40, big), 0)).toBeNull();
    expect(a.dropped).toBeGreaterThanOrEqual(1);
  });
});

class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readonly CONNECTING = 0;
  readyState = 1;
  bufferedAmount = 0;
  sent: any[] = [];
  send(s: string): void {
    this.sent.push(JSON.parse(s));
  }
  close(): void {
    this.readyState = 3;
  }
}

describe('the 15-frame queue', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  test('overflow while the process lags drops the oldest frames and sends stats', async () => {
    const key = await t.createKey();
    const text = JSON.stringify({ platform: 'web', durationSec: 30, consent: true });
    const headers = await signRequest({
      keyId: key.keyId,
      secret: key.secret,
      method: 'POST',
      path: '/sdk/v1/cloud/sessions',
      body: text,
      timestamp: Math.floor(t.clock.now() / 1000),
    });
    const s = (
      await t.app.inject({
        method: 'POST',
        url: '/sdk/v1/cloud/sessions',
        headers: { ...headers, 'content-type': 'application/json' },
        payload: text,
      })
    ).json().data;

    const ws = new FakeSocket();
    let scheduled = 0;
    const laggingScheduler = { schedule: () => void scheduled++, lagMs: () => 1000 } as any;
    const conn = new StreamConnection(ws as any, {
      ctx: t.ctx,
      scheduler: laggingScheduler,
      log: { error() {}, warn() {} },
      onEnd() {},
    });
    ws.emit('message', Buffer.from(JSON.stringify({ t: 'hello', protocol: 1, token: s.sessionToken })), false);
    await waitFor(() => ws.sent.some((e) => e.t === 'ready'), { timeoutMs: 5000 }).catch(() => undefined);
    expect(ws.sent[0]).toMatchObject({ t: 'ready', sessionId: s.sessionId });

    for (let i = 0; i < 20; i++) ws.emit('message', Buffer.from(crop(i, i * 33_333)), true);
    const stats = ws.sent.filter((e) => e.t === 'stats');
    expect(stats.length).toBeGreaterThanOrEqual(1);
    expect(stats[0]).toMatchObject({ received: 16, dropped: 1 });
    expect(stats[0].backlogMs).toBeGreaterThan(400);
    expect(scheduled).toBe(20);
    expect(conn.session.drain(100)).toBe(false); // the 15 newest remain and are processed
    ws.emit('message', Buffer.from(JSON.stringify({ t: 'abort' })), false);
  });
});

describe('emotion and gaze', () => {
  let srv: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(async () => {
    setAuxAnalyzerForTests(undefined);
    await srv.close();
  });

  test('a node without the models strips emotion and gaze from acceptedFeatures', async () => {
    setAuxAnalyzerForTests({ emotionAvailable: false, gazeAvailable: false, analyze: async () => ({}) });
    const key = await srv.createKey();
    const s = await createSession(srv, key, { features: ['hrv', 'emotion', 'gaze'] });
    const { c, ready } = await TestClient.ready(s.wsUrl, s.sessionToken);
    expect(ready.acceptedFeatures).toEqual(['hrv']);
    c.close();
  });

  test('hello may narrow the features further', async () => {
    const key = await srv.createKey();
    const s = await createSession(srv, key, { features: ['hrv', 'bp'] });
    const { c, ready } = await TestClient.ready(s.wsUrl, s.sessionToken, { features: ['bp', 'spo2'] });
    expect(ready.acceptedFeatures).toEqual(['bp']);
    c.close();
  });

  test('assembled aux frames give emotion and gaze events, aggregated into the final measurement', async () => {
    const probs = [0, 0, 0, 0, 0.7, 0.3, 0, 0];
    setAuxAnalyzerForTests({
      emotionAvailable: true,
      gazeAvailable: true,
      analyze: async () => ({ emotion: probs, gaze: { yaw: 0.1, pitch: -0.05 } }),
    });
    const key = await srv.createKey();
    const s = await createSession(srv, key, { features: ['emotion', 'gaze'] });
    const { c, ready } = await TestClient.ready(s.wsUrl, s.sessionToken);
    expect(ready.acceptedFeatures).toEqual(['emotion', 'gaze']);
    c.bin(crop(0, 0));
    for (const ch of encodeAuxChunks({ tMicros: 0, jpeg: new Uint8Array(12_000).fill(7) })) c.bin(ch);
    await c.next('emotion');
    expect(await c.next('gaze')).toEqual({ t: 'gaze', yaw: 0.1, pitch: -0.05, tMs: 0 });
    expect(c.events.find((e) => e.t === 'emotion')).toEqual({ t: 'emotion', probs, tMs: 0 });
    c.json({ t: 'stop' });
    const final = await c.next('final');
    expect(final.measurement.emotion).toMatchObject({ probs, dominant: 'Happiness', samples: 1 });
    expect(final.measurement.gaze).toMatchObject({ meanYaw: 0.1, meanPitch: -0.05, samples: 1 });
    expect(await settledJob(srv, s.sessionId)).toMatchObject({ status: 'completed' });
  });
});
