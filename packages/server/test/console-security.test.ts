/**
 * The security cases of every console route (issue 16, "Tested"): no session, an expired session,
 * an NCS1-signed request (API keys never reach the console), a cross-site state change; and the
 * console cookie on /sdk/v1 authenticates nothing. One world for the file: each case is a request.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { signedInject } from './helpers.js';
import { createConsoleWorld, json, PASSWORD, type ConsoleWorld } from './console-world.js';

/** Every console route with a body it would accept (ids need not exist: the gate answers first). */
const ROUTES: Array<{ method: string; url: string; body?: unknown }> = [
  { method: 'GET', url: '/api/v1/me' },
  { method: 'GET', url: '/api/v1/overview' },
  { method: 'GET', url: '/api/v1/keys' },
  { method: 'POST', url: '/api/v1/keys', body: { name: 'x' } },
  { method: 'PATCH', url: '/api/v1/keys/key_000000000000000000000000', body: { status: 'disabled' } },
  { method: 'GET', url: '/api/v1/webhooks' },
  { method: 'POST', url: '/api/v1/webhooks', body: { url: 'https://127.0.0.1:9/hook' } },
  { method: 'POST', url: '/api/v1/webhooks/whe_000000000000000000000000/rotate' },
  { method: 'POST', url: '/api/v1/webhooks/whe_000000000000000000000000/test' },
  { method: 'DELETE', url: '/api/v1/webhooks/whe_000000000000000000000000' },
  { method: 'GET', url: '/api/v1/webhooks/deliveries' },
  { method: 'GET', url: '/api/v1/webhooks/deliveries/whd_000000000000000000000000' },
  { method: 'POST', url: '/api/v1/webhooks/deliveries/whd_000000000000000000000000/redeliver' },
  { method: 'GET', url: '/api/v1/usage' },
  { method: 'GET', url: '/api/v1/users' },
  { method: 'GET', url: '/api/v1/users/key_000000000000000000000000/u1/measurements' },
  { method: 'GET', url: '/api/v1/users/key_000000000000000000000000/u1/baseline' },
  { method: 'GET', url: '/api/v1/measurements/meas_000000000000000000000000' },
  { method: 'GET', url: '/api/v1/billing' },
  { method: 'POST', url: '/api/v1/billing/purchases', body: { packId: 'starter' } },
];
const CHANGES = ROUTES.filter((r) => r.method !== 'GET').concat([
  { method: 'POST', url: '/api/v1/auth/login', body: { email: 'x@example.com', password: PASSWORD } },
  { method: 'POST', url: '/api/v1/auth/logout' },
]);
const name = (r: { method: string; url: string }) => `${r.method} ${r.url}`;

let w: ConsoleWorld;
let expired: string;

beforeAll(async () => {
  w = await createConsoleWorld({ env: { VITALS_CONSOLE_PAYMENTS: 'manual' } });
  expired = w.cookie;
  w.clock.advance(31 * 60_000);
  w.cookie = (await w.signIn(w.email, PASSWORD)).cookie!;
});
afterAll(async () => w?.close());

const expect401 = (res: LightMyRequestResponse) => {
  expect(res.statusCode).toBe(401);
  expect(json(res).error.code).toBe('unauthorized');
};

describe('without a valid session: 401 unauthorized', () => {
  test.each(ROUTES.map((r) => [name(r), r] as const))('%s, no cookie', async (_n, r) => {
    expect401(await w.api({ ...r, cookie: null }));
  });
  test.each(ROUTES.map((r) => [name(r), r] as const))('%s, expired session', async (_n, r) => {
    expect401(await w.api({ ...r, cookie: expired }));
  });
});

describe('an NCS1-signed request (with or without a valid cookie): 401', () => {
  test.each(ROUTES.map((r) => [name(r), r] as const))('%s', async (_n, r) => {
    const signed = await signedInject(w.app, w.key, {
      method: r.method,
      url: r.url,
      body: r.body as Record<string, unknown> | undefined,
      timestamp: Math.floor(w.clock.now() / 1000),
      headers: { cookie: `vitals_console=${w.cookie}`, origin: 'http://localhost' },
    });
    expect401(signed);
    expect(json(signed).error.message).toMatch(/API keys/);
  });
});

describe('a cross-site state change: 403 forbidden, whatever the session', () => {
  const variants: Array<[string, Record<string, string | undefined>]> = [
    ['another Origin', { origin: 'https://evil.example' }],
    ['Origin null', { origin: 'null' }],
    ['same host, other port', { origin: 'http://localhost:8080' }],
    ['no Origin, no Sec-Fetch-Site', { origin: undefined }],
    ['Sec-Fetch-Site: cross-site', { origin: undefined, 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { origin: 'http://localhost', 'sec-fetch-site': 'same-site' }],
  ];
  const cases = CHANGES.flatMap((r) => variants.map(([v, headers]) => [`${name(r)} (${v})`, r, headers] as const));
  test.each(cases)('%s', async (_n, r, headers) => {
    const res = await w.api({ ...r, headers });
    expect(res.statusCode).toBe(403);
    expect(json(res).error.code).toBe('forbidden');
  });

  test('without Origin, Sec-Fetch-Site: same-origin is accepted', async () => {
    const res = await w.api({
      method: 'POST',
      url: '/api/v1/keys',
      body: { name: 'same-origin' },
      headers: { origin: undefined, 'sec-fetch-site': 'same-origin' },
    });
    expect(res.statusCode).toBe(201);
  });

  test('a read needs no Origin', async () => {
    expect((await w.api({ url: '/api/v1/keys', headers: { 'sec-fetch-site': 'none' } })).statusCode).toBe(200);
  });

  test('a body that is not JSON is 400, a state change with a valid session otherwise passes', async () => {
    const res = await w.api({
      method: 'POST',
      url: '/api/v1/keys',
      headers: { 'content-type': 'text/plain' },
      body: {},
    });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });
});

describe('the console cookie on /sdk/v1 authenticates nothing', () => {
  test.each([
    ['GET', '/sdk/v1/users'],
    ['GET', '/sdk/v1/logs'],
    ['POST', '/sdk/v1/auth/test'],
  ])('%s %s with only the cookie is 401', async (method, url) => {
    const res = await w.app.inject({
      method: method as 'GET',
      url,
      headers: { cookie: `vitals_console=${w.cookie}`, origin: 'http://localhost' },
    });
    expect401(res);
  });
});

test('the public /api/v1/pricing and /api/v1/limits need no session', async () => {
  for (const url of ['/api/v1/pricing', '/api/v1/limits'])
    expect((await w.api({ url, cookie: null })).statusCode).toBe(200);
});

test('the OpenAPI document lists the console routes under their tag, with the cookie scheme', async () => {
  const doc = json(await w.app.inject({ url: '/openapi.json' }));
  expect(doc.components.securitySchemes.consoleSession).toEqual({
    type: 'apiKey',
    in: 'cookie',
    name: 'vitals_console',
  });
  for (const r of ROUTES) {
    const path = r.url
      .replace(/key_0+/, '{keyId}')
      .replace(/whe_0+/, '{id}')
      .replace(/whd_0+/, '{id}')
      .replace(/meas_0+/, '{id}')
      .replace('/u1/', '/{userRef}/');
    const op = doc.paths[path]?.[r.method.toLowerCase()];
    expect(op, `${r.method} ${path}`).toBeDefined();
    expect(op.tags).toEqual(['console']);
    expect(op.security).toEqual([{ consoleSession: [] }]);
  }
  expect(doc.paths['/api/v1/auth/login'].post.tags).toEqual(['console']);
});
