/**
 * `POST /sdk/v1/measurements` spends its nonce in the same write as the measurement (signature.ts,
 * `deferNonce`). From outside, the spec's order must not change (Authentication, rule 3: ... bad
 * signature, reused nonce, rate limit; then the body): a replay is nonce_reused whatever its body or
 * query, before the rate limit, never stores anything, and leaves its usage row; a fresh nonce is
 * spent by every answer, a 400 or a 500 included.
 */
import { describe, expect } from 'vitest';
import { countMeasurements, createWorld, goodMeasurement, json, test, type Body, type World } from './helpers.js';
import { RateLimiter } from '../src/auth/rate-limiter.js';

const POST = { method: 'POST', url: '/sdk/v1/measurements' } as const;

const measurements = countMeasurements;

const codes = async (w: World): Promise<Array<[unknown, unknown]>> =>
  (await w.usageRows(w.key.keyId)).map((r) => [r.status, r.error_code]);

/** Calls of one millisecond are ordered by their random log ids: step the clock between calls. */
async function call(
  w: World,
  opts: { nonce: string; body?: Body; url?: string; headers?: Record<string, string | undefined> },
) {
  const res = await w.call({ ...POST, body: goodMeasurement(), ...opts });
  w.clock.advance(1);
  return res;
}

describe('a replay is nonce_reused whatever else is wrong with it', () => {
  test.for<[string, { body?: Body; url?: string; headers?: Record<string, string | undefined> }]>([
    ['the same valid body', {}],
    ['a body that is not JSON', { body: '{not json' }],
    ['a body the schema refuses', { body: { source: 'web', durationSec: 'long' } }],
    ['a JSON body sent as text/plain', { headers: { 'content-type': 'text/plain' } }],
    ['no body at all', { body: undefined }],
    ['an invalid query (advanced=1)', { url: '/sdk/v1/measurements?advanced=1' }],
  ])('%s: 401, one usage row, nothing stored', async ([, replay], { world }) => {
    expect((await call(world, { nonce: 'replayed-nonce-1' })).statusCode).toBe(201);
    const res = await call(world, { nonce: 'replayed-nonce-1', ...replay });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.code).toBe('unauthorized');
    expect(await codes(world)).toEqual([
      ['success', null],
      ['unauthorized', 'nonce_reused'],
    ]);
    expect(await measurements(world)).toBe(1);
  });

  test('a fresh nonce is spent by a 400: the same nonce with a good body afterwards is a replay', async ({ world }) => {
    const bad = await call(world, { nonce: 'spent-by-a-400', body: { source: 'web', durationSec: 'long' } });
    expect(bad.statusCode).toBe(400);
    expect(json(bad).error.code).toBe('validation_error');
    const notJson = await call(world, { nonce: 'spent-by-bad-json', body: '{not json' });
    expect(notJson.statusCode).toBe(400);
    expect((await call(world, { nonce: 'spent-by-a-400' })).statusCode).toBe(401);
    expect((await call(world, { nonce: 'spent-by-bad-json' })).statusCode).toBe(401);
    // A 400 leaves no usage row (as before); the two replays do.
    expect(await codes(world)).toEqual([
      ['unauthorized', 'nonce_reused'],
      ['unauthorized', 'nonce_reused'],
    ]);
    expect(await measurements(world)).toBe(0);
  });

  test('the validation message is the one the route gave before (attachValidation changes nothing)', async ({
    world,
  }) => {
    const res = await call(world, { nonce: 'message-check-1', body: { durationSec: 60 } });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.message).toMatch(/source/);
  });

  test('concurrent copies of one request: exactly one is stored, the others are nonce_reused', async ({ world }) => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () => world.call({ ...POST, body: goodMeasurement(), nonce: 'raced-nonce-1' })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 401, 401, 401, 401, 401, 401, 401]);
    expect(await measurements(world)).toBe(1);
    const rows = await world.usageRows(world.key.keyId);
    expect(rows.filter((r) => r.error_code === 'nonce_reused')).toHaveLength(7);
  });

  test('many calls at once, replays among them: each distinct nonce is stored once', async ({ world }) => {
    const nonces = Array.from({ length: 30 }, (_, i) => `burst-nonce-${i}`);
    const sent = [...nonces, ...nonces.slice(0, 10)];
    const results = await Promise.all(sent.map((nonce) => world.call({ ...POST, body: goodMeasurement(), nonce })));
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(30);
    expect(results.filter((r) => r.statusCode === 401)).toHaveLength(10);
    expect(await measurements(world)).toBe(30);
  });
});

describe('the rate limit comes after the nonce', () => {
  test('at the limit, a replay is nonce_reused (not 429); a fresh call is 429 and its nonce is spent', async () => {
    const w = await createWorld({ keyOptions: { rateLimitPerMin: 2 } });
    try {
      expect((await call(w, { nonce: 'limit-nonce-1' })).statusCode).toBe(201);
      expect((await call(w, { nonce: 'limit-nonce-2' })).statusCode).toBe(201);
      expect((await call(w, { nonce: 'limit-nonce-1' })).statusCode).toBe(401);
      expect((await call(w, { nonce: 'limit-nonce-1', body: '{not json' })).statusCode).toBe(401);
      const limited = await call(w, { nonce: 'limit-nonce-3' });
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['ratelimit-limit']).toBe('2');
      expect((await call(w, { nonce: 'limit-nonce-3' })).statusCode).toBe(401);
      expect(await codes(w)).toEqual([
        ['success', null],
        ['success', null],
        ['unauthorized', 'nonce_reused'],
        ['unauthorized', 'nonce_reused'],
        ['rate_limited', 'rate_limited'],
        ['unauthorized', 'nonce_reused'],
      ]);
      expect(await measurements(w)).toBe(2);
    } finally {
      await w.close();
    }
  });

  test('replays do not use up the budget; a 400 does (its nonce was fresh)', async () => {
    const w = await createWorld({ keyOptions: { rateLimitPerMin: 3 } });
    try {
      expect((await call(w, { nonce: 'budget-nonce-1' })).statusCode).toBe(201);
      for (let i = 0; i < 3; i++) expect((await call(w, { nonce: 'budget-nonce-1' })).statusCode).toBe(401);
      expect(
        (await call(w, { nonce: 'budget-nonce-2', body: { source: 'web', durationSec: 'long' } })).statusCode,
      ).toBe(400);
      expect((await call(w, { nonce: 'budget-nonce-3' })).statusCode).toBe(201);
      expect((await call(w, { nonce: 'budget-nonce-4' })).statusCode).toBe(429);
    } finally {
      await w.close();
    }
  });
});

describe('errors after the signature layer still spend the nonce first', () => {
  test('a write that fails is a 500 with the nonce spent; a replay whose write fails is still nonce_reused', async ({
    world,
  }) => {
    const db = world.t.ctx.db;
    const real = db.spendNonceAndInsert.bind(db);
    db.spendNonceAndInsert = () => Promise.reject(new Error('disk full'));
    try {
      const failed = await call(world, { nonce: 'failing-write-1' });
      expect(failed.statusCode).toBe(500);
      expect(json(failed).error.code).toBe('internal_error');
    } finally {
      db.spendNonceAndInsert = real;
    }
    expect((await call(world, { nonce: 'failing-write-1' })).statusCode).toBe(401);
    expect((await call(world, { nonce: 'failing-write-2' })).statusCode).toBe(201);
    db.spendNonceAndInsert = () => Promise.reject(new Error('disk full'));
    try {
      expect((await call(world, { nonce: 'failing-write-2' })).statusCode).toBe(401);
    } finally {
      db.spendNonceAndInsert = real;
    }
    expect(await measurements(world)).toBe(1);
  });
});

describe('RateLimiter.refund', () => {
  test('gives back a hit of the current window only', () => {
    const r = new RateLimiter(60_000);
    expect(r.hit('k', 1, 1000).allowed).toBe(true);
    r.refund('k', 1000);
    expect(r.hit('k', 1, 2000).allowed).toBe(true);
    expect(r.hit('k', 1, 3000).allowed).toBe(false);
    // A hit of the previous window is not given back to the next one.
    expect(r.hit('k', 1, 61_000).allowed).toBe(true);
    r.refund('k', 3000);
    expect(r.hit('k', 1, 62_000).allowed).toBe(false);
    // Refunding a key that has no hits in the window gives nothing (and does not throw).
    r.refund('other', 62_000);
    expect(r.hit('other', 1, 62_000).allowed).toBe(true);
    expect(r.hit('other', 1, 62_500).allowed).toBe(false);
  });
});
