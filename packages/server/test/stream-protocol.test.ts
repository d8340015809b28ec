/**
 * Every protocol error of the spec over a real socket (spec: Streaming protocol, Streaming error
 * codes; CLARIFICATIONS 27): malformed control messages and packets are fatal `protocol_error`,
 * tokens are checked in `hello` only, one connection per token.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeAuxChunks, encodeQuality, encodeTelemetry } from '@vitals/protocol';
import { signSessionToken } from '../src/domain/session-token.js';
import { ManualClock, waitFor, type TestKey, type TestServer } from '../src/testing.js';
import { STATS_INTERVAL_MS } from '../src/stream/limits.js';
import {
  TestClient,
  createSession,
  crop,
  jobOf,
  settledJob,
  startRunningSession,
  startTestServer,
} from './stream-helpers.js';

let srv: TestServer;
let key: TestKey;
// The server's time is moved by hand (the periodic `stats`); the rate rules run on the real clock.
const clock = new ManualClock(Date.now());
beforeAll(async () => {
  srv = await startTestServer({ clock });
  key = await srv.createKey();
});
afterAll(() => srv.close());

const running = () => startRunningSession(srv, key);

function u8(len: number, fill = 0): Uint8Array {
  return new Uint8Array(len).fill(fill);
}

function auxChunk(
  over: { chunkIndex?: number; chunkCount?: number; byteLength?: number; payload?: number } = {},
): Uint8Array {
  const payload = over.payload ?? 100;
  const b = new Uint8Array(20 + payload);
  const dv = new DataView(b.buffer);
  b[0] = 4;
  b[1] = 1;
  dv.setUint32(2, 1000, true);
  dv.setUint16(6, over.chunkIndex ?? 0, true);
  dv.setUint16(8, over.chunkCount ?? 1, true);
  dv.setUint16(10, 448, true);
  dv.setUint16(12, 448, true);
  dv.setUint32(16, over.byteLength ?? payload, true);
  return b;
}

function telemetryWithReservedSlot(): Uint8Array {
  const slots = u8(56);
  slots[20] = 7;
  return encodeTelemetry({ tMicros: 0, slots });
}

describe('binary packets after ready: each malformed kind is a fatal protocol_error and fails the session', () => {
  const cases: Array<[string, () => Uint8Array]> = [
    ['unknown type', () => Uint8Array.of(9, 1, 0, 0)],
    ['type 0', () => Uint8Array.of(0, 1)],
    ['one byte', () => Uint8Array.of(1)],
    [
      'wrong protocol byte',
      () => {
        const b = crop(0, 0);
        b[1] = 2;
        return b;
      },
    ],
    ['face crop one byte short', () => crop(0, 0).subarray(0, 3899)],
    [
      'face crop one byte long',
      () => {
        const b = u8(3901);
        b.set(crop(0, 0));
        return b;
      },
    ],
    [
      'quality packet of 17 bytes',
      () => encodeQuality({ tMicros: 0, faceWidthRatio: 0.4, meanBrightness: 0.5, motionScore: 0 }).subarray(0, 17),
    ],
    ['telemetry of 61 bytes', () => encodeTelemetry({ tMicros: 0, slots: u8(56) }).subarray(0, 61)],
    ['telemetry reserved slot non-zero', telemetryWithReservedSlot],
    ['aux chunkCount zero', () => auxChunk({ chunkCount: 0 })],
    ['aux chunkIndex not below chunkCount', () => auxChunk({ chunkIndex: 2, chunkCount: 2 })],
    ['aux byteLength larger than the payload', () => auxChunk({ byteLength: 101 })],
    ['aux byteLength smaller than the payload', () => auxChunk({ byteLength: 99 })],
    ['aux header truncated', () => auxChunk().subarray(0, 15)],
  ];
  test.each(cases)('%s', async (_name, make) => {
    const { s, c } = await running();
    c.bin(crop(0, 0));
    c.bin(make());
    const { error, close } = await c.fatal();
    expect(error).toMatchObject({ t: 'error', code: 'protocol_error', fatal: true });
    expect(close.code).toBe(1002);
    expect(c.events.some((e) => e.t === 'final')).toBe(false);
    const job = await settledJob(srv, s.sessionId);
    expect(job).toMatchObject({ status: 'failed', error: { code: 'protocol_error' } });
  });

  test('well-formed quality, telemetry and aux chunks are accepted', async () => {
    const { c } = await running();
    c.bin(crop(0, 0));
    c.bin(encodeQuality({ tMicros: 0, faceWidthRatio: 0.4, meanBrightness: 0.5, motionScore: 0 }));
    c.bin(encodeTelemetry({ tMicros: 0, slots: u8(56) }));
    for (const chunk of encodeAuxChunks({ tMicros: 0, jpeg: u8(20_000, 1) })) c.bin(chunk);
    c.json({ t: 'ping' });
    await c.next('pong');
    expect(c.events.some((e) => e.t === 'error')).toBe(false);
    c.json({ t: 'abort', reason: 'test' });
    await c.closed;
  });
});

describe('message size (8 KB cap)', () => {
  test('a message over 8192 bytes gets protocol_error, close 1009, session failed', async () => {
    const { s, c } = await running();
    c.bin(auxChunk({ payload: 8192 - 20 + 1 }));
    const { error, close } = await c.fatal();
    expect(error).toMatchObject({ code: 'protocol_error', fatal: true });
    expect(close.code).toBe(1009);
    expect(await settledJob(srv, s.sessionId)).toMatchObject({ status: 'failed', error: { code: 'protocol_error' } });
  });

  test('exactly 8192 bytes is allowed', async () => {
    const { c } = await running();
    c.bin(auxChunk({ payload: 8192 - 20 }));
    c.json({ t: 'ping' });
    await c.next('pong');
    c.close();
  });

  test.each([
    ['binary, 16385 bytes', (c: TestClient) => c.bin(u8(16_385, 1))],
    ['binary, 65536 bytes', (c: TestClient) => c.bin(u8(65_536, 1))],
    ['binary, 100000 bytes', (c: TestClient) => c.bin(u8(100_000, 1))],
    ['text, 65536 bytes', (c: TestClient) => c.ws.send('x'.repeat(65_536))],
  ])(
    'a huge message (%s) is refused from its header without being buffered: the error event, then 1009',
    async (_name, send) => {
      const { s, c } = await running();
      send(c);
      const { error, close } = await c.fatal();
      expect(error).toMatchObject({ t: 'error', code: 'protocol_error', fatal: true });
      expect(close.code).toBe(1009);
      expect(await settledJob(srv, s.sessionId)).toMatchObject({ status: 'failed', error: { code: 'protocol_error' } });
    },
  );
});

describe('control messages', () => {
  test.each([
    ['binary packet before ready', (c: TestClient) => c.bin(crop(0, 0))],
    ['ping before hello', (c: TestClient) => c.json({ t: 'ping' })],
    ['stop before hello', (c: TestClient) => c.json({ t: 'stop' })],
    ['invalid JSON', (c: TestClient) => c.ws.send('{not json')],
    ['JSON that is not an object', (c: TestClient) => c.ws.send('42')],
  ])('%s → protocol_error, session stays pending', async (_n, act) => {
    const s = await createSession(srv, key);
    const c = await TestClient.connect(s.wsUrl);
    act(c);
    const { error, close } = await c.fatal();
    expect(error).toMatchObject({ code: 'protocol_error', fatal: true });
    expect(close.code).toBe(1002);
    expect(await jobOf(srv, s.sessionId)).toMatchObject({ status: 'pending' });
  });

  test('hello with protocol 2 → protocol_error', async () => {
    const s = await createSession(srv, key);
    const c = await TestClient.connect(s.wsUrl);
    c.json({ t: 'hello', protocol: 2, token: s.sessionToken });
    expect((await c.fatal()).error.code).toBe('protocol_error');
  });

  test.each([
    ['hello twice', { t: 'hello', protocol: 1, token: 'x' }],
    ['unknown control message', { t: 'pause' }],
    ['message without t', { hello: true }],
  ])('%s after ready → protocol_error, session failed', async (_n, msg) => {
    const { s, c } = await running();
    c.json(msg);
    expect((await c.fatal()).error).toMatchObject({ code: 'protocol_error', fatal: true });
    expect(await settledJob(srv, s.sessionId)).toMatchObject({ status: 'failed', error: { code: 'protocol_error' } });
  });

  test('a message sent before ready arrives (hello still being checked) → protocol_error', async () => {
    const s = await createSession(srv, key);
    const c = await TestClient.connect(s.wsUrl);
    c.json({ t: 'hello', protocol: 1, token: s.sessionToken });
    c.bin(crop(0, 0));
    expect((await c.fatal()).error.code).toBe('protocol_error');
  });

  test('ping → pong', async () => {
    const { c } = await running();
    c.json({ t: 'ping' });
    expect(await c.next('pong')).toEqual({ t: 'pong' });
    c.close();
  });
});

describe('tokens', () => {
  test.each([
    ['garbage', 'not-a-token'],
    ['missing', undefined],
    ['a number', 42],
    ['wrong prefix', 'vst2.e30.AAAA'],
  ])('%s token → token_invalid', async (_n, token) => {
    const s = await createSession(srv, key);
    const c = await TestClient.connect(s.wsUrl);
    c.json({ t: 'hello', protocol: 1, token });
    const { error, close } = await c.fatal();
    expect(error).toMatchObject({ code: 'token_invalid', fatal: true });
    expect(close.code).toBe(1008);
    expect(await jobOf(srv, s.sessionId)).toMatchObject({ status: 'pending' });
  });

  test('a tampered token (claims changed) → token_invalid', async () => {
    const s = await createSession(srv, key);
    const [p, payload, sig] = s.sessionToken.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    claims.dur = 180;
    const forged = `${p}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${sig}`;
    const c = await TestClient.connect(s.wsUrl);
    c.json({ t: 'hello', protocol: 1, token: forged });
    expect((await c.fatal()).error.code).toBe('token_invalid');
  });

  test('a token signed with another secret → token_invalid', async () => {
    const s = await createSession(srv, key);
    const now = Math.floor(Date.now() / 1000);
    const token = signSessionToken('another-secret', {
      sid: s.sessionId,
      kid: key.keyId,
      dur: 30,
      feat: [],
      iat: now,
      exp: now + 300,
    });
    const c = await TestClient.connect(s.wsUrl);
    c.json({ t: 'hello', protocol: 1, token });
    expect((await c.fatal()).error.code).toBe('token_invalid');
  });

  test('a token in the query string is ignored: no ready without hello', async () => {
    const s = await createSession(srv, key);
    const c = await TestClient.connect(`${s.wsUrl}?token=${encodeURIComponent(s.sessionToken)}`);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.events).toEqual([]);
    expect(await jobOf(srv, s.sessionId)).toMatchObject({ status: 'pending' });
    c.json({ t: 'ping' });
    expect((await c.fatal()).error.code).toBe('protocol_error');
  });

  test('a token of a disabled key → token_invalid', async () => {
    const k = await srv.createKey();
    const s = await createSession(srv, k);
    await srv.ctx.db.db.updateTable('api_keys').set({ status: 'disabled' }).where('id', '=', k.keyId).execute();
    srv.ctx.keys.invalidate(k.keyId);
    const c = await TestClient.connect(s.wsUrl);
    c.json({ t: 'hello', protocol: 1, token: s.sessionToken });
    expect((await c.fatal()).error.code).toBe('token_invalid');
  });
});

describe('one connection per token', () => {
  test('a second connection with the same token → session_already_used; the first goes on', async () => {
    const { s, c } = await running();
    const second = await TestClient.connect(s.wsUrl);
    second.json({ t: 'hello', protocol: 1, token: s.sessionToken });
    const { error, close } = await second.fatal();
    expect(error).toMatchObject({ code: 'session_already_used', fatal: true });
    expect(close.code).toBe(1008);
    c.json({ t: 'ping' });
    await c.next('pong');
    expect(await jobOf(srv, s.sessionId)).toMatchObject({ status: 'running' });
    c.close();
  });

  test('after the session ended, the token cannot connect again', async () => {
    const { s, c } = await running();
    c.json({ t: 'abort', reason: 'done' });
    await c.closed;
    const again = await TestClient.connect(s.wsUrl);
    again.json({ t: 'hello', protocol: 1, token: s.sessionToken });
    expect((await again.fatal()).error.code).toBe('session_already_used');
  });

  test('ten simultaneous hellos: exactly one ready', async () => {
    const s = await createSession(srv, key);
    const clients = await Promise.all(Array.from({ length: 10 }, () => TestClient.connect(s.wsUrl)));
    for (const c of clients) c.json({ t: 'hello', protocol: 1, token: s.sessionToken });
    const answered = (c: TestClient) => c.events.some((e) => e.t === 'ready' || e.t === 'error');
    await waitFor(() => clients.every(answered), { what: 'an answer to every hello' });
    const readies = clients.filter((c) => c.events.some((e) => e.t === 'ready'));
    const used = clients.filter((c) => c.events.some((e) => e.code === 'session_already_used'));
    expect(readies).toHaveLength(1);
    expect(used).toHaveLength(9);
    for (const c of clients) c.close();
  });
});

describe('endings', () => {
  test('abort → aborted (aborted_by_client), no final, nothing metered', async () => {
    const { s, c } = await running();
    for (let i = 0; i < 10; i++) c.bin(crop(i, i * 33_333));
    c.json({ t: 'abort', reason: 'user cancelled' });
    const close = await c.closed;
    expect(close.code).toBe(1000);
    expect(c.events.some((e) => e.t === 'final')).toBe(false);
    const job = await settledJob(srv, s.sessionId);
    expect(job).toMatchObject({ status: 'aborted', error: { code: 'aborted_by_client' } });
    expect(job.measurementId).toBeUndefined();
    const row = await srv.ctx.db.db
      .selectFrom('cloud_jobs')
      .select('metered')
      .where('id', '=', s.sessionId)
      .executeTakeFirstOrThrow();
    expect(Number(row.metered)).toBe(0);
  });

  test('socket dropped without stop → aborted (disconnected)', async () => {
    const { s, c } = await running();
    c.bin(crop(0, 0));
    c.ws.terminate();
    expect(await settledJob(srv, s.sessionId)).toMatchObject({ status: 'aborted', error: { code: 'disconnected' } });
  });

  test('stop with no frames → insufficient_signal then a poor final', async () => {
    const { s, c } = await running();
    c.json({ t: 'stop' });
    const final = await c.next('final');
    expect(c.events.find((e) => e.t === 'error')).toMatchObject({ code: 'insufficient_signal', fatal: false });
    expect(final.measurement).toMatchObject({
      isComplete: false,
      quality: { level: 'poor' },
      cardiac: { heartRate: null },
    });
    expect(await settledJob(srv, s.sessionId)).toMatchObject({ status: 'completed' });
  });

  test('frames whose timestamps do not increase are dropped and counted', async () => {
    const { c } = await running();
    c.bin(crop(0, 1000));
    c.bin(crop(1, 1000));
    c.bin(crop(2, 500));
    c.json({ t: 'ping' });
    await c.next('pong');
    clock.advance(STATS_INTERVAL_MS);
    await c.next('stats');
    const stats = c.events.filter((e) => e.t === 'stats').pop();
    expect(stats).toMatchObject({ received: 3, dropped: 2 });
    c.close();
  });
});
