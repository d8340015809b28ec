/**
 * VITALS_TRUST_PROXY (docs/operating.md, "Behind a reverse proxy"): behind a proxy every request
 * comes from the proxy's address, so the per-address limits need the client named in
 * X-Forwarded-For, but only when a trusted proxy put it there. Over a real socket from 127.0.0.1,
 * which plays the proxy.
 */
import { describe, expect, test } from 'vitest';
import { createWorld, type World } from './helpers.js';
import { FAILED_SIGNATURES_PER_MIN } from '../src/auth/signature.js';
import { MODEL_DOWNLOADS_PER_MIN, MODELS_FILES_PATH } from '../src/routes/models.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { LOGIN_PER_ADDRESS } from '../src/console/auth-routes.js';

/** `n` unsigned calls to a signed route, as from `forwardedFor` (if any); the statuses. */
async function refusals(w: World, n: number, forwardedFor?: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${w.baseUrl}/sdk/v1/auth/test`, {
      method: 'POST',
      headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    });
    out.push(res.status);
  }
  return out;
}

const addresses = async (w: World): Promise<string[]> =>
  (await w.t.ctx.db.db.selectFrom('auth_rejections').select('address').distinct().orderBy('address').execute()).map(
    (r) => r.address,
  );

async function withWorld(env: Record<string, string>, body: (w: World) => Promise<void>): Promise<void> {
  const w = await createWorld({ listen: true, env });
  try {
    await body(w);
  } finally {
    await w.close();
  }
}

describe('behind a trusted proxy', () => {
  test('two clients with different X-Forwarded-For are throttled separately', async () =>
    withWorld({ VITALS_TRUST_PROXY: '127.0.0.1' }, async (w) => {
      const a = await refusals(w, FAILED_SIGNATURES_PER_MIN + 1, '203.0.113.7');
      expect(a.slice(0, FAILED_SIGNATURES_PER_MIN).every((s) => s === 401)).toBe(true);
      expect(a[FAILED_SIGNATURES_PER_MIN]).toBe(429);
      // Another client behind the same proxy still has its whole allowance.
      expect(await refusals(w, 1, '198.51.100.9')).toEqual([401]);
      expect(await addresses(w)).toEqual(['198.51.100.9', '203.0.113.7']);
    }));

  test('the client the proxy saw counts, not what the client wrote before it', async () =>
    withWorld({ VITALS_TRUST_PROXY: '127.0.0.0/8' }, async (w) => {
      // The client forged 192.0.2.1; the proxy appended the address it really came from.
      await refusals(w, 2, '192.0.2.1, 203.0.113.7');
      expect(await addresses(w)).toEqual(['203.0.113.7']);
    }));

  test('the model-file download limit keys on the forwarded client too', async () =>
    withWorld({ VITALS_TRUST_PROXY: 'loopback' }, async (w) => {
      const url = `${w.baseUrl}${MODELS_FILES_PATH}/${'0'.repeat(64)}`;
      const get = (client: string) => fetch(url, { headers: { 'x-forwarded-for': client } }).then((r) => r.status);
      for (let i = 0; i < MODEL_DOWNLOADS_PER_MIN.address; i++) expect(await get('203.0.113.7')).not.toBe(429);
      expect(await get('203.0.113.7')).toBe(429);
      expect(await get('198.51.100.9')).not.toBe(429);
    }));

  test(
    'console sign-in attempts are limited per forwarded client too',
    async () =>
      withWorld({ VITALS_TRUST_PROXY: '127.0.0.1' }, async (w) => {
        let n = 0;
        const signIn = (client: string) =>
          fetch(`${w.baseUrl}/api/v1/auth/login`, {
            method: 'POST',
            headers: { origin: w.baseUrl!, 'content-type': 'application/json', 'x-forwarded-for': client },
            // A new email each time, so that no account's own limit is reached first.
            body: JSON.stringify({ email: `nobody${++n}@example.com`, password: 'guess' }),
          }).then((r) => r.status);
        for (let i = 0; i < LOGIN_PER_ADDRESS; i++) expect(await signIn('203.0.113.7')).toBe(401);
        expect(await signIn('203.0.113.7')).toBe(429);
        expect(await signIn('198.51.100.9')).toBe(401);
      }),
    120_000,
  ); // each refused sign-in hashes a password (scrypt): slow on a loaded machine
});

/** A console sign-in POST sent from `origin` through a proxy that rewrote Host; the status. */
const signInVia = (w: World, origin: string, forwardedHost: string) =>
  fetch(`${w.baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { origin, 'x-forwarded-host': forwardedHost, 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'nobody@example.com', password: 'guess' }),
  }).then((r) => r.status);

describe('console origin behind a proxy that rewrites Host', () => {
  test('a trusted proxy: the page at the forwarded host is its own origin', async () =>
    withWorld({ VITALS_TRUST_PROXY: '127.0.0.1' }, async (w) => {
      // Past the same-origin check to the credentials check: 401, not 403.
      expect(await signInVia(w, 'https://vitals.example.org', 'vitals.example.org')).toBe(401);
      expect(await signInVia(w, 'https://evil.example.net', 'vitals.example.org')).toBe(403);
    }));

  test('an untrusted peer cannot make another origin its own with X-Forwarded-Host', async () =>
    withWorld({}, async (w) => {
      expect(await signInVia(w, 'https://evil.example.net', 'evil.example.net')).toBe(403);
    }));
});

describe('trust-proxy.security', () => {
  test.each([
    ['unset', {}],
    ['0', { VITALS_TRUST_PROXY: '0' }],
    ['another proxy only', { VITALS_TRUST_PROXY: '10.0.0.0/8' }],
  ])('%s: a forged X-Forwarded-For does not escape the limit', async (_name, env) =>
    withWorld(env, async (w) => {
      const statuses: number[] = [];
      for (let i = 0; i <= FAILED_SIGNATURES_PER_MIN; i++)
        statuses.push(...(await refusals(w, 1, `203.0.113.${i % 250}`)));
      expect(statuses[FAILED_SIGNATURES_PER_MIN]).toBe(429);
      expect(await addresses(w)).toEqual(['127.0.0.1']);
    }),
  );
});

describe('trust-proxy.error: VITALS_TRUST_PROXY refusals', () => {
  test.each([
    ['true', /may not trust every peer/],
    ['*', /may not trust every peer/],
    ['1', /hop count/],
    ['2', /hop count/],
    ['-1', /not an IP address/],
    ['0x7f.1', /not an IP address/],
    ['10/8', /not an address\/prefix-length CIDR/],
    ['1.5', /not an IP address/],
    ['10.0.0.1,', /empty entry/],
    ['10.0.0.0/33', /not an address\/prefix-length CIDR/],
    ['0.0.0.0/0', /would trust every peer/],
    ['::/0', /would trust every peer/],
    ['proxy.internal', /not an IP address/],
  ])('%s is refused', (raw, message) => {
    expect(() => loadConfig({ VITALS_TRUST_PROXY: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ VITALS_TRUST_PROXY: raw })).toThrow(message);
  });

  test.each([
    [undefined, false],
    ['', false],
    ['0', false],
    [' 10.0.0.1 , 10.1.0.0/16,::1, Loopback ', ['10.0.0.1', '10.1.0.0/16', '::1', 'loopback']],
  ])('%s is read as %s', (raw, expected) => {
    expect(loadConfig(raw === undefined ? {} : { VITALS_TRUST_PROXY: raw }).trustProxy).toEqual(expected);
  });
});
