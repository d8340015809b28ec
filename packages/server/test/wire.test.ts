/**
 * What every response shares (spec: response envelope; "Every response carries an X-Request-Id
 * header (exposed to browsers through CORS)"; CLARIFICATIONS 1).
 */
import { describe, expect } from 'vitest';
import { goodMeasurement, json, test } from './helpers.js';

const REQ_ID = /^req_[0-9a-f]{24}$/;

describe('X-Request-Id on every response', () => {
  test.for([
    ['public route', 'GET', '/health'],
    ['unknown route', 'GET', '/nope'],
    ['unknown /sdk/v1 route', 'POST', '/sdk/v1/nothing-here'],
    ['rejected signature', 'GET', '/sdk/v1/users'],
    ['wrong method on a known path', 'DELETE', '/sdk/v1/measurements'],
  ] as const)('%s', async ([, method, url], { world }) => {
    const res = await world.app.inject({ method, url });
    expect(res.headers['x-request-id']).toMatch(REQ_ID);
  });

  test('signed success, validation error and not-found carry distinct request ids', async ({ world }) => {
    const a = await world.call({ method: 'POST', url: '/sdk/v1/measurements', body: goodMeasurement() });
    const b = await world.call({ method: 'POST', url: '/sdk/v1/measurements', body: {} });
    const c = await world.call({ url: '/sdk/v1/measurements/meas_000000000000000000000000' });
    const ids = [a, b, c].map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(REQ_ID);
    expect(new Set(ids).size).toBe(3);
    expect([a.statusCode, b.statusCode, c.statusCode]).toEqual([201, 400, 404]);
  });
});

describe('envelope', () => {
  test('an unknown route is a 404 in the failure envelope', async ({ world }) => {
    const res = await world.app.inject({ method: 'GET', url: '/sdk/v1/does-not-exist' });
    expect(res.statusCode).toBe(404);
    expect(json(res)).toEqual({ ok: false, error: { code: 'not_found', message: expect.any(String) } });
    expect(res.headers['content-type']).toMatch(/application\/json/);
  });

  test('the success envelope has exactly ok and data', async ({ world }) => {
    for (const res of [
      await world.call({ method: 'POST', url: '/sdk/v1/auth/test' }),
      await world.call({ url: '/sdk/v1/users' }),
      await world.call({ url: '/sdk/v1/logs' }),
      await world.app.inject({ url: '/api/v1/limits' }),
    ]) {
      expect(Object.keys(json(res)).sort()).toEqual(['data', 'ok']);
      expect(json(res).ok).toBe(true);
    }
  });

  test('the failure envelope has exactly ok and error{code,message}', async ({ world }) => {
    const res = await world.call({ method: 'POST', url: '/sdk/v1/measurements', body: { source: 1 } });
    const env = json(res);
    expect(Object.keys(env).sort()).toEqual(['error', 'ok']);
    expect(Object.keys(env.error).sort()).toEqual(['code', 'message']);
  });
});

describe('CORS', () => {
  test('a request with an Origin sees X-Request-Id exposed', async ({ world }) => {
    const res = await world.app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://app.example' } });
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    const exposed = String(res.headers['access-control-expose-headers'])
      .toLowerCase()
      .split(/\s*,\s*/);
    expect(exposed).toContain('x-request-id');
    expect(exposed).toEqual(expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']));
  });

  test('an error response to a browser is readable too', async ({ world }) => {
    const res = await world.app.inject({
      method: 'GET',
      url: '/sdk/v1/users',
      headers: { origin: 'https://app.example' },
    });
    expect(res.statusCode).toBe(401);
    expect(String(res.headers['access-control-expose-headers']).toLowerCase()).toContain('x-request-id');
  });

  test('a preflight allows the four signing headers', async ({ world }) => {
    const res = await world.app.inject({
      method: 'OPTIONS',
      url: '/sdk/v1/measurements',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-key-id,x-timestamp,x-nonce,x-signature,content-type',
      },
    });
    expect(res.statusCode).toBeLessThan(300);
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const h of ['x-key-id', 'x-timestamp', 'x-nonce', 'x-signature', 'content-type']) expect(allowed).toContain(h);
  });
});
