/**
 * The SDK against the real server: signing, envelopes, ApiError, resources, clock check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, VitalsClient, type FetchLike } from '@vitals/sdk';
import { recordingLogger, startTestServer, type TestServer } from './support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

async function client(extra: Partial<ConstructorParameters<typeof VitalsClient>[0]> = {}) {
  const key = await server.createKey();
  const logger = recordingLogger();
  return { key, logger, c: new VitalsClient({ ...key, baseUrl: server.baseUrl, logger, ...extra }) };
}

const goodMeasurement = {
  source: 'web',
  durationSec: 30,
  isComplete: true,
  quality: { level: 'good' as const, score: 0.9, usable: true },
  cardiac: { heartRate: { value: 64, unit: 'bpm' as const, confidence: 0.9 } },
  respiratory: { breathingRate: { value: 14, unit: 'brpm' as const } },
};

describe('auth.test', () => {
  it('returns the key facts and the server clock, without a drift warning', async () => {
    const { c, key, logger } = await client();
    const facts = await c.auth.test();
    expect(facts.keyId).toBe(key.keyId);
    expect(facts.clockDrift).toBeDefined();
    expect(Math.abs(facts.clockDrift!.driftMs)).toBeLessThan(5_000);
    expect(logger.messages).toEqual([]);
  });

  it('warns once through the injected logger when the local clock is 60 s behind', async () => {
    const { c, logger } = await client({ clock: () => Date.now() - 60_000 });
    const drift = await c.checkClock();
    expect(drift!.driftMs).toBeGreaterThan(55_000);
    expect(drift!.exceeded).toBe(true);
    await c.auth.test();
    expect(logger.messages).toHaveLength(1);
    // The server's clock has whole-second resolution, so 60 s of skew reads as 59-61 s.
    expect(logger.messages[0]).toMatch(/clock is (59|60|61) s behind/);
  });

  it('a wrong secret is ApiError unauthorized (401) with the request id, and is not retried', async () => {
    const key = await server.createKey();
    let calls = 0;
    const counting: FetchLike = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const c = new VitalsClient({ ...key, secret: key.secret + 'x', baseUrl: server.baseUrl, fetch: counting });
    const err = await c.auth.test().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'unauthorized', status: 401 });
    expect((err as ApiError).requestId).toMatch(/^req_/);
    expect(calls).toBe(1);
  });
});

describe('measurements', () => {
  it('create then get: stored for this key, with the call request id, on_device and unattested', async () => {
    const { c, key } = await client();
    const stored = await c.measurements.create({ ...goodMeasurement, origin: 'cloud', attested: true });
    expect(stored.id).toMatch(/^meas_/);
    expect(stored.keyId).toBe(key.keyId);
    expect(stored.origin).toBe('on_device');
    expect(stored.attested).toBe(false);
    const read = await c.measurements.get(stored.id);
    expect(read.id).toBe(stored.id);
    expect(read.requestId).toMatch(/^req_/);
  });

  it('adds the configured sdkVersion before signing, and keeps an explicit one', async () => {
    const { c } = await client({ sdkVersion: 'vitals-js-9.9.9' });
    expect((await c.measurements.create(goodMeasurement)).sdkVersion).toBe('vitals-js-9.9.9');
    expect((await c.measurements.create({ ...goodMeasurement, sdkVersion: 'ios-1.2' })).sdkVersion).toBe('ios-1.2');
  });

  it('advanced opt-in returns the raw block', async () => {
    const { c } = await client();
    const raw = { rrIntervalsMs: [900, 910, 905], ppgSignal: [0.1, 0.2, 0.1], sampleRateHz: 30 };
    const stored = await c.measurements.create({ ...goodMeasurement, raw }, { advanced: true });
    expect(stored.raw).toEqual(raw);
    expect((await c.measurements.get(stored.id)).raw).toBeUndefined();
    expect((await c.measurements.get(stored.id, { advanced: true })).raw).toEqual(raw);
  });

  it('submitOnDevice: the result from the page stored in one line, with the userRef of the backend, page extras dropped', async () => {
    const { c } = await client();
    const fromPage = {
      ...goodMeasurement,
      source: 'web',
      sdkVersion: '0.1.0',
      modelsVersion: 'human-3.3.6+0123456789ab',
      origin: 'cloud',
      attested: true,
      userRef: 'chosen-by-the-page',
      sneaky: 'x',
    };
    const stored = await c.measurements.submitOnDevice(fromPage, { userRef: 'user-7' });
    expect(stored).toMatchObject({ origin: 'on_device', attested: false, source: 'web', userRef: 'user-7' });
    expect(stored).toMatchObject({ sdkVersion: '0.1.0', modelsVersion: 'human-3.3.6+0123456789ab' });
    expect(stored).not.toHaveProperty('sneaky');
    expect(() => c.measurements.submitOnDevice('not an object')).toThrow(/must be an object/);
  });

  it('models.grant mints a grant for the page', async () => {
    const { c } = await client();
    const g = await c.models.grant({ ttlSec: 60 });
    expect(g.grant.length).toBeGreaterThan(20);
    expect(g.manifestUrl).toMatch(/\/sdk\/v1\/models\/manifest$/);
    expect(g.modelsVersion).toMatch(/^human-/);
    await expect(c.models.grant({ ttlSec: 5 })).rejects.toMatchObject({ code: 'validation_error', status: 400 });
  });

  it('another key gets a plain 404', async () => {
    const a = await client();
    const b = await client();
    const stored = await a.c.measurements.create(goodMeasurement);
    await expect(b.c.measurements.get(stored.id)).rejects.toMatchObject({ status: 404 });
  });

  it('a malformed field is validation_error (400), thrown once without retry', async () => {
    const { c } = await client();
    await expect(c.measurements.create({ ...goodMeasurement, userRef: '' })).rejects.toMatchObject({
      code: 'validation_error',
      status: 400,
    });
    await expect(c.measurements.create({ ...goodMeasurement, sdkVersion: '-bad' })).rejects.toMatchObject({
      code: 'validation_error',
    });
  });
});

describe('users', () => {
  it('lists users, a user history and a baseline, with refs that need no escaping', async () => {
    const { c } = await client();
    const ref = 'user:42@example-org';
    for (let i = 0; i < 5; i++) await c.measurements.create({ ...goodMeasurement, userRef: ref });
    const list = await c.users.list({ page: 1, perPage: 10 });
    expect(list.items.map((u) => u.userRef)).toContain(ref);
    const history = await c.users.measurements(ref, { perPage: 3 });
    expect(history.items).toHaveLength(3);
    expect(history.items.every((m) => m.userRef === ref)).toBe(true);
    const baseline = await c.users.baseline(ref);
    expect(baseline.status).toBe('ok');
    expect(baseline.metrics.heartRateBpm?.median).toBe(64);
  });

  it('perPage out of range is validation_error', async () => {
    const { c } = await client();
    await expect(c.users.list({ perPage: 101 })).rejects.toMatchObject({ code: 'validation_error' });
  });
});

describe('logs', () => {
  it('list pages by cursor and iterate() follows nextCursor to the end', async () => {
    const { c } = await client();
    for (let i = 0; i < 5; i++) await c.auth.test();
    const first = await c.logs.list({ limit: 2 });
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).toMatch(/^\d+\.log_[0-9a-f]{24}$/);
    const rows = [];
    for await (const row of c.logs.iterate({ limit: 2, intervalMs: 1000 })) rows.push(row);
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.endpoint === '/sdk/v1/auth/test' && r.status === 'success')).toBe(true);
    expect(new Set(rows.map((r) => r.id)).size).toBe(5);
  });

  it('a malformed cursor is validation_error', async () => {
    const { c } = await client();
    await expect(c.logs.list({ cursor: 'nope' })).rejects.toMatchObject({ code: 'validation_error', status: 400 });
  });
});

describe('rate limits', () => {
  it('a 429 past the retry budget is ApiError rate_limited carrying RateLimit-Reset', async () => {
    const key = await server.createKey({ rateLimitPerMin: 1 });
    const c = new VitalsClient({ ...key, baseUrl: server.baseUrl, retry: { maxResetWaitMs: 0 } });
    await c.auth.test();
    const err = (await c.auth.test().catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe('rate_limited');
    expect(err.status).toBe(429);
    expect(err.retryAfterSec).toBeGreaterThan(0);
  });
});
