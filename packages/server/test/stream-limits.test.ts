/**
 * The streaming limits over a real socket (spec: Limits, Streaming error codes; CLARIFICATIONS 26):
 * frame rate by capture time and by wall clock, duration by capture time and by wall clock, idle,
 * token expiry, insufficient signal.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generatePhantom } from '@vitals/engine';
import { encodeFaceCrop, type FaceCropPacket } from '@vitals/protocol';
import { ManualClock, type TestKey, type TestServer } from '../src/testing.js';
import {
  TestClient,
  createSession,
  crop,
  jobOf,
  sendWithinRate,
  settledJob,
  startTestServer,
} from './stream-helpers.js';

describe('frame rate (32 per second)', () => {
  let srv: TestServer;
  let key: TestKey;
  beforeAll(async () => {
    srv = await startTestServer();
    key = await srv.createKey();
  });
  afterAll(() => srv.close());

  test('33 frames within one second of capture time → frame_rate_exceeded, session failed', async () => {
    const s = await createSession(srv, key);
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    for (let i = 0; i < 40; i++) c.bin(crop(i, i * 30_000)); // 33.3 fps by their own timestamps
    const { error, close } = await c.fatal();
    expect(error).toMatchObject({ code: 'frame_rate_exceeded', fatal: true });
    expect(close.code).toBe(1008);
    expect(await settledJob(srv, s.sessionId)).toMatchObject({
      status: 'failed',
      error: { code: 'frame_rate_exceeded' },
    });
  });

  test('exactly 32 fps by capture time, sent in a burst, is accepted', async () => {
    const s = await createSession(srv, key);
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    for (let i = 0; i < 60; i++) c.bin(crop(i, i * 31_250));
    c.json({ t: 'ping' });
    await c.next('pong');
    expect(c.events.some((e) => e.t === 'error')).toBe(false);
    c.close();
  });

  test('30 fps capture sent faster than real time (sustained) → frame_rate_exceeded', async () => {
    const s = await createSession(srv, key);
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    for (let i = 0; i < 150; i++) c.bin(crop(i, i * 33_333)); // five seconds of capture at once
    const { error } = await c.fatal();
    expect(error).toMatchObject({ code: 'frame_rate_exceeded', fatal: true });
    expect(error.message).toMatch(/wall clock/);
  });

  test('a catch-up burst after a stall (two seconds of frames at once) is accepted', async () => {
    const s = await createSession(srv, key);
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    for (let i = 0; i < 60; i++) c.bin(crop(i, i * 33_333));
    c.json({ t: 'ping' });
    await c.next('pong');
    expect(c.events.some((e) => e.t === 'error')).toBe(false);
    c.close();
  });
});

describe('duration and signal', () => {
  let srv: TestServer;
  let key: TestKey;
  beforeAll(async () => {
    srv = await startTestServer();
    key = await srv.createKey();
  });
  afterAll(() => srv.close());

  test(
    "a frame past the token's duration → duration_exceeded (non-fatal), then the final of what came before",
    { timeout: 20_000 },
    async () => {
      const s = await createSession(srv, key, { durationSec: 20 });
      const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
      // 10 fps: 20 s of capture and one frame past it, sent as fast as the rate rule allows (~5 s).
      await sendWithinRate(
        c,
        Array.from({ length: 202 }, (_, i) => crop(i, i * 100_000)),
      );
      const final = await c.next('final');
      const errors = c.events.filter((e) => e.t === 'error');
      expect(errors[0]).toMatchObject({ code: 'duration_exceeded', fatal: false });
      expect(c.events.indexOf(errors[0])).toBeLessThan(c.events.indexOf(final));
      expect((await c.closed).code).toBe(1000);
      const job = await settledJob(srv, s.sessionId);
      expect(job).toMatchObject({ status: 'completed', framesProcessed: 200 });
    },
  );

  test('noise crops → insufficient_signal (non-fatal) and a final with poor quality and null metrics', async () => {
    const s = await createSession(srv, key, { durationSec: 30 });
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    // 22 s of pure-noise crops at 8 fps, sent within the wall-clock rule (~4 s).
    const { packets } = generatePhantom({ durationSec: 22, fps: 8, pureNoise: true, seed: 3 });
    await sendWithinRate(
      c,
      packets.map((p) => encodeFaceCrop(p as FaceCropPacket)),
    );
    c.json({ t: 'stop' });
    const final = await c.next('final', 15_000);
    for (const e of c.events.filter((x) => x.t === 'hr')) expect(e.sqi).toBeGreaterThan(0.38);
    expect(c.events.find((e) => e.t === 'error')).toMatchObject({ code: 'insufficient_signal', fatal: false });
    expect(final.measurement).toMatchObject({
      origin: 'cloud',
      attested: true,
      isComplete: false,
      quality: { level: 'poor' },
      cardiac: { heartRate: null },
      respiratory: { breathingRate: null },
      hrv: null,
      stress: null,
      bloodPressure: null,
      spo2: null,
    });
    expect(await settledJob(srv, s.sessionId)).toMatchObject({
      status: 'completed',
      measurementId: final.measurementId,
    });
  }, 30_000);
});

describe('idle (VITALS_IDLE_TIMEOUT_SEC=1, injected clock)', () => {
  let srv: TestServer;
  let key: TestKey;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    srv = await startTestServer({ clock, env: { VITALS_IDLE_TIMEOUT_SEC: '1' } });
    key = await srv.createKey();
  });
  afterAll(() => srv.close());

  test('no packets after ready → idle_timeout, session aborted, no final', async () => {
    const s = await createSession(srv, key);
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    c.bin(crop(0, 0));
    c.json({ t: 'ping' });
    await c.next('pong');
    clock.advance(1001);
    const { error, close } = await c.fatal();
    expect(error).toMatchObject({ code: 'idle_timeout', fatal: true });
    expect(close.code).toBe(1008);
    expect(c.events.some((e) => e.t === 'final')).toBe(false);
    expect(await settledJob(srv, s.sessionId)).toMatchObject({ status: 'aborted', error: { code: 'idle_timeout' } });
  });

  test('pings do not keep a session alive (only packets do)', async () => {
    const s = await createSession(srv, key);
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    // 600 ms, a ping answered, 600 ms more: past the second only if the ping did not count.
    clock.advance(600);
    c.json({ t: 'ping' });
    await c.next('pong');
    clock.advance(600);
    const { error } = await c.fatal();
    expect(error.code).toBe('idle_timeout');
  });

  test('a socket that never says hello is closed with idle_timeout; the session stays pending', async () => {
    const s = await createSession(srv, key);
    const c = await TestClient.connect(s.wsUrl);
    clock.advance(1001);
    const { error } = await c.fatal();
    expect(error.code).toBe('idle_timeout');
    expect(await jobOf(srv, s.sessionId)).toMatchObject({ status: 'pending' });
  });
});

describe('token TTL (VITALS_SESSION_TOKEN_TTL_SEC=1)', () => {
  test('hello after the TTL → token_expired, session stays pending', async () => {
    const clock = new ManualClock(Date.now());
    const srv = await startTestServer({ clock, env: { VITALS_SESSION_TOKEN_TTL_SEC: '1' } });
    try {
      const key = await srv.createKey();
      const s = await createSession(srv, key);
      clock.advance(2100);
      const c = await TestClient.connect(s.wsUrl);
      c.json({ t: 'hello', protocol: 1, token: s.sessionToken });
      const { error, close } = await c.fatal();
      expect(error).toMatchObject({ code: 'token_expired', fatal: true });
      expect(close.code).toBe(1008);
      expect(await jobOf(srv, s.sessionId)).toMatchObject({ status: 'pending' });
    } finally {
      await srv.close();
    }
  });
});

describe('with an injected clock', () => {
  let srv: TestServer;
  let clock: ManualClock;
  let key: TestKey;
  beforeAll(async () => {
    clock = new ManualClock(Date.now());
    srv = await startTestServer({ clock, env: { VITALS_IDLE_TIMEOUT_SEC: '600' } });
    key = await srv.createKey();
  });
  afterAll(() => srv.close());

  test('token used 301 s after minting → token_expired (default TTL 300 s)', async () => {
    const s = await createSession(srv, key);
    clock.advance(301_000);
    const c = await TestClient.connect(s.wsUrl);
    c.json({ t: 'hello', protocol: 1, token: s.sessionToken });
    expect((await c.fatal()).error.code).toBe('token_expired');
    clock.set(Date.now());
  });

  test('wall clock past the duration (plus 5 s grace) → duration_exceeded, then the final', async () => {
    clock.set(Date.now());
    const s = await createSession(srv, key, { durationSec: 20 });
    const { c } = await TestClient.ready(s.wsUrl, s.sessionToken);
    for (let i = 0; i < 10; i++) c.bin(crop(i, i * 33_333));
    c.json({ t: 'ping' });
    await c.next('pong');
    clock.advance(25_001);
    const final = await c.next('final');
    expect(c.events.find((e) => e.t === 'error')).toMatchObject({ code: 'duration_exceeded', fatal: false });
    expect(final.measurement.quality.level).toBe('poor');
    expect(await settledJob(srv, s.sessionId)).toMatchObject({ status: 'completed' });
  });
});
