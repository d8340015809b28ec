/**
 * Model grants and the model bundle (spec: POST /sdk/v1/models/grant, "Without the grant the
 * browser cannot fetch the model key"; Authentication 3; issue 15 §1; docs/decisions.md, "Model
 * grants"). The bundle's bytes are checked against the npm packages on disk, read independently.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { VERSION_STRING_PATTERN } from '@vitals/protocol';
import { createWorld, goodMeasurement, json, test, type World } from './helpers.js';
import { setKeyStatus } from '../src/store/orgs-keys.js';
import { signModelGrant } from '../src/domain/model-grant.js';
import { signSessionToken, verifySessionToken } from '../src/domain/session-token.js';

const GRANT = '/sdk/v1/models/grant';
const MANIFEST = '/sdk/v1/models/manifest';
const require = createRequire(import.meta.url);
const HUMAN_MODELS = path.join(path.dirname(path.dirname(require.resolve('@vladmandic/human'))), 'models');
const WASM_DIR = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm'));
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

async function mint(w: World, body: Record<string, unknown> = {}) {
  const res = await w.call({ method: 'POST', url: GRANT, body });
  expect(res.statusCode, res.body).toBe(201);
  return json(res).data as {
    grant: string;
    expiresAt: number;
    modelsVersion: string;
    origin?: string;
    manifestUrl: string;
  };
}

const bearer = (grant: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${grant}`, ...extra });

async function manifest(w: World, grant: string) {
  const res = await w.app.inject({ url: MANIFEST, headers: bearer(grant) });
  expect(res.statusCode, res.body).toBe(200);
  return json(res).data as {
    modelsVersion: string;
    files: Array<{ name: string; url: string; sha256: string; bytes: number; contentType: string }>;
  };
}

describe('POST /sdk/v1/models/grant', () => {
  test('.happy 201: a vmg1 grant for 300 s, the bundle version, the absolute manifest address', async ({ world }) => {
    const d = await mint(world);
    expect(d.grant).toMatch(/^vmg1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(d.expiresAt).toBe(Math.floor(world.clock.now() / 1000) * 1000 + 300_000);
    expect(d.modelsVersion).toMatch(new RegExp(VERSION_STRING_PATTERN));
    expect(d.modelsVersion).toMatch(/^human-3\.\d+\.\d+\+[0-9a-f]{12}$/);
    expect(d.modelsVersion.length).toBeLessThanOrEqual(64);
    expect(d.origin).toBeUndefined();
    expect(d.manifestUrl).toBe('http://localhost:80/sdk/v1/models/manifest');
    const claims = JSON.parse(Buffer.from(d.grant.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ kid: world.key.keyId, org: world.key.orgId, mv: d.modelsVersion });
  });

  test('.happy origin is bound (normalized as a browser sends it) and ttlSec is honoured', async ({ world }) => {
    const d = await mint(world, { origin: 'https://App.Example.com:443', ttlSec: 30 });
    expect(d.origin).toBe('https://app.example.com');
    expect(d.expiresAt - Math.floor(world.clock.now() / 1000) * 1000).toBe(30_000);
    const d2 = await mint(world, { ttlSec: 900, origin: 'http://127.0.0.1:5173' });
    expect(d2.expiresAt - Math.floor(world.clock.now() / 1000) * 1000).toBe(900_000);
    expect(d2.origin).toBe('http://127.0.0.1:5173');
  });

  test('.happy an empty body is the defaults; the call is a success row of the usage log', async ({ world }) => {
    const res = await world.call({ method: 'POST', url: GRANT });
    expect(res.statusCode).toBe(201);
    const rows = await world.usageRows(world.key.keyId);
    expect(rows.map((r) => [r.endpoint, r.method, r.status])).toEqual([[GRANT, 'POST', 'success']]);
  });

  test(".happy the grant's modelsVersion is accepted on a submitted measurement", async ({ world }) => {
    const { modelsVersion } = await mint(world);
    const res = await world.call({
      method: 'POST',
      url: '/sdk/v1/measurements',
      body: goodMeasurement({ modelsVersion }),
    });
    expect(res.statusCode).toBe(201);
    expect(json(res).data.modelsVersion).toBe(modelsVersion);
  });

  test('.happy manifestUrl follows VITALS_PUBLIC_URL', async () => {
    const w = await createWorld({ env: { VITALS_PUBLIC_URL: 'https://vitals.example.com/' } });
    try {
      expect((await mint(w)).manifestUrl).toBe('https://vitals.example.com/sdk/v1/models/manifest');
    } finally {
      await w.close();
    }
  });

  test.for([
    ['ttlSec below 30', { ttlSec: 29 }],
    ['ttlSec above 900', { ttlSec: 901 }],
    ['ttlSec not an integer', { ttlSec: 60.5 }],
    ['ttlSec as text', { ttlSec: '60' }],
    ['origin with a path', { origin: 'https://app.example.com/page' }],
    ['origin with a trailing slash', { origin: 'https://app.example.com/' }],
    ['origin not http(s)', { origin: 'ftp://app.example.com' }],
    ['origin with credentials', { origin: 'https://user@app.example.com' }],
    ['origin not a string', { origin: 7 }],
  ] as const)('.error 400 validation_error: %s', async ([, body], { world }) => {
    const res = await world.call({ method: 'POST', url: GRANT, body: body as Record<string, unknown> });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });

  test('.error a body that is not JSON is 400 validation_error', async ({ world }) => {
    const res = await world.call({ method: 'POST', url: GRANT, body: '{nope' });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });

  test('.security unsigned: 401 unauthorized, a missing_credentials row, no grant', async ({ world }) => {
    const res = await world.app.inject({ method: 'POST', url: GRANT, headers: { 'x-key-id': world.key.keyId } });
    expect(res.statusCode).toBe(401);
    expect(json(res)).toEqual({ ok: false, error: { code: 'unauthorized', message: expect.any(String) } });
    const rows = await world.usageRows(world.key.keyId);
    expect(rows.map((r) => [r.status, r.error_code])).toEqual([['unauthorized', 'missing_credentials']]);
  });

  test('.security a disabled key: 403 key_disabled with its row; an expired key: 401 key_expired', async ({
    world,
  }) => {
    const off = await world.newKey({ status: 'disabled' });
    const r1 = await world.call({ method: 'POST', url: GRANT, key: off });
    expect(r1.statusCode).toBe(403);
    expect(json(r1).error.code).toBe('key_disabled');
    expect((await world.usageRows(off.keyId)).map((r) => r.error_code)).toEqual(['key_disabled']);
    const old = await world.newKey({ expiresAt: world.clock.now() - 1 });
    const r2 = await world.call({ method: 'POST', url: GRANT, key: old });
    expect(r2.statusCode).toBe(401);
    expect(json(r2).error.code).toBe('unauthorized');
    expect((await world.usageRows(old.keyId)).map((r) => r.error_code)).toEqual(['key_expired']);
  });

  test('.security rate-limited like every signed path: 429 with RateLimit headers and a rate_limited row', async ({
    world,
  }) => {
    const k = await world.newKey({ rateLimitPerMin: 2 });
    for (let i = 0; i < 2; i++) expect((await world.call({ method: 'POST', url: GRANT, key: k })).statusCode).toBe(201);
    const res = await world.call({ method: 'POST', url: GRANT, key: k });
    expect(res.statusCode).toBe(429);
    expect(json(res).error.code).toBe('rate_limited');
    expect(res.headers['ratelimit-limit']).toBe('2');
    expect(res.headers['ratelimit-remaining']).toBe('0');
    const rows = await world.usageRows(k.keyId);
    expect(rows.map((r) => r.status)).toEqual(['success', 'success', 'rate_limited']);
  });

  test('.security a replayed signed call is 401 nonce_reused', async ({ world }) => {
    const nonce = 'grant-replay-nonce-1';
    expect((await world.call({ method: 'POST', url: GRANT, nonce })).statusCode).toBe(201);
    const res = await world.call({ method: 'POST', url: GRANT, nonce });
    expect(res.statusCode).toBe(401);
    expect((await world.usageRows(world.key.keyId)).map((r) => r.error_code)).toEqual([null, 'nonce_reused']);
  });
});

describe('GET /sdk/v1/models/manifest and /sdk/v1/models/files/:sha256', () => {
  test('.happy the manifest lists the face models and the WASM runtime, with their real hashes', async ({ world }) => {
    const { grant, modelsVersion } = await mint(world);
    const res = await world.app.inject({ url: MANIFEST, headers: bearer(grant) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const m = json(res).data;
    expect(m.modelsVersion).toBe(modelsVersion);
    const names = m.files.map((f: { name: string }) => f.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'blazeface.json',
        'blazeface.bin',
        'facemesh.json',
        'facemesh.bin',
        'iris.json',
        'emotion.json',
        'tfjs-backend-wasm.wasm',
        'tfjs-backend-wasm-simd.wasm',
        'tfjs-backend-wasm-threaded-simd.wasm',
      ]),
    );
    for (const f of m.files) {
      const onDisk = readFileSync(path.join(f.name.endsWith('.wasm') ? WASM_DIR : HUMAN_MODELS, f.name));
      expect(f.sha256, f.name).toBe(sha(onDisk));
      expect(f.bytes, f.name).toBe(onDisk.length);
      expect(f.url).toBe(`/sdk/v1/models/files/${f.sha256}`);
    }
    // The version is derived from the content: `+` and the first 12 hex of the sorted name/hash lines.
    const lines = [...m.files]
      .sort((a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1))
      .map((f: { name: string; sha256: string }) => `${f.name} ${f.sha256}\n`)
      .join('');
    expect(modelsVersion.endsWith(`+${sha(lines).slice(0, 12)}`)).toBe(true);
  });

  test('.happy every file: its bytes, content type, immutable private caching, ETag; If-None-Match is 304', async ({
    world,
  }) => {
    const { grant } = await mint(world);
    const { files } = await manifest(world, grant);
    const types: Record<string, string> = {
      json: 'application/json',
      bin: 'application/octet-stream',
      wasm: 'application/wasm',
    };
    for (const f of files) {
      const res = await world.app.inject({ url: f.url, headers: bearer(grant) });
      expect(res.statusCode, f.name).toBe(200);
      expect(sha(res.rawPayload)).toBe(f.sha256);
      expect(res.headers['content-type']).toBe(types[f.name.split('.').pop()!]);
      expect(res.headers['cache-control']).toBe('private, max-age=31536000, immutable');
      expect(res.headers.etag).toBe(`"${f.sha256}"`);
      expect(Number(res.headers['content-length'])).toBe(f.bytes);
    }
    const again = await world.app.inject({
      url: files[0].url,
      headers: bearer(grant, { 'if-none-match': `"${files[0].sha256}"` }),
    });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
  });

  test('.happy the bound origin, and a request without Origin (same-origin GET), are served', async ({ world }) => {
    const { grant } = await mint(world, { origin: 'https://app.example.com' });
    const { files } = await manifest(world, grant);
    const res = await world.app.inject({
      url: files[0].url,
      headers: bearer(grant, { origin: 'https://app.example.com' }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(res.headers['access-control-expose-headers']).toLowerCase()).toContain('x-request-id');
  });

  test('.happy CORS preflight for any origin allows the Authorization header', async ({ world }) => {
    const res = await world.app.inject({
      method: 'OPTIONS',
      url: MANIFEST,
      headers: {
        origin: 'https://shop.example.org',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example.org');
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('authorization');
    expect(String(res.headers['access-control-allow-methods'])).toContain('GET');
  });

  test('.error an unknown hash with a valid grant is 404 not_found', async ({ world }) => {
    const { grant } = await mint(world);
    for (const h of ['0'.repeat(64), 'nothex', '../../package.json']) {
      const res = await world.app.inject({
        url: `/sdk/v1/models/files/${encodeURIComponent(h)}`,
        headers: bearer(grant),
      });
      expect(res.statusCode, h).toBe(404);
      expect(json(res).error.code).toBe('not_found');
    }
  });

  /** Each case answers 401 unauthorized on the manifest and on every file, and serves no byte of the bundle. */
  const refusals: Array<[string, (w: World, grant: string) => Promise<Record<string, string>>]> = [
    ['no Authorization header', async () => ({})],
    ['another scheme', async (_w, g) => ({ authorization: `Basic ${g}` })],
    ['a malformed grant', async () => bearer('vmg1.abc')],
    [
      'a session token',
      async (w) => {
        const now = Math.floor(w.clock.now() / 1000);
        return bearer(
          signSessionToken(w.t.ctx.serverSecret, {
            sid: 'cj_x',
            kid: w.key.keyId,
            dur: 60,
            feat: [],
            iat: now,
            exp: now + 300,
          }),
        );
      },
    ],
    [
      'a tampered payload (longer expiry, same signature)',
      async (_w, g) => {
        const [p, payload, s] = g.split('.');
        const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
        claims.exp += 3600;
        return bearer(`${p}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`);
      },
    ],
    [
      'a grant signed with another secret',
      async (w) => {
        const now = Math.floor(w.clock.now() / 1000);
        const mv = (await w.t.ctx.modelBundle()).modelsVersion;
        return bearer(
          signModelGrant('another-secret', { kid: w.key.keyId, org: w.key.orgId, mv, iat: now, exp: now + 300 }),
        );
      },
    ],
    [
      'an expired grant',
      async (w, g) => {
        w.clock.advance(300_000);
        return bearer(g);
      },
    ],
    ['another origin than the bound one', async (_w, g) => bearer(g, { origin: 'https://evil.example.net' })],
    ['an opaque origin ("null")', async (_w, g) => bearer(g, { origin: 'null' })],
    [
      'a key disabled since the grant was minted',
      async (w, g) => {
        await setKeyStatus(w.t.ctx.db.db, w.key.keyId, 'disabled');
        w.t.ctx.keys.invalidate();
        return bearer(g);
      },
    ],
    [
      'a grant for another bundle version',
      async (w) => {
        const now = Math.floor(w.clock.now() / 1000);
        return bearer(
          signModelGrant(w.t.ctx.serverSecret, {
            kid: w.key.keyId,
            org: w.key.orgId,
            mv: 'human-0.0.1+000000000000',
            iat: now,
            exp: now + 300,
          }),
        );
      },
    ],
  ];

  test.for(refusals)('.security 401 with %s', async ([, headersFor], { world }) => {
    const { grant } = await mint(world, { origin: 'https://app.example.com' });
    const { files } = await manifest(world, grant);
    const headers = await headersFor(world, grant);
    for (const url of [MANIFEST, ...files.map((f) => f.url)]) {
      const res = await world.app.inject({ url, headers });
      expect(res.statusCode, url).toBe(401);
      expect(json(res)).toEqual({ ok: false, error: { code: 'unauthorized', message: expect.any(String) } });
      expect(res.headers['cache-control']).toBeUndefined();
    }
  });

  test('.security a grant never verifies as a session token', async ({ world }) => {
    const { grant } = await mint(world);
    expect(verifySessionToken(world.t.ctx.serverSecret, grant, world.clock.now()).ok).toBe(false);
  });

  test('.security the grant expires exactly at expiresAt', async ({ world }) => {
    const { grant, expiresAt } = await mint(world, { ttlSec: 30 });
    world.clock.set(expiresAt - 1);
    expect((await world.app.inject({ url: MANIFEST, headers: bearer(grant) })).statusCode).toBe(200);
    world.clock.set(expiresAt);
    expect((await world.app.inject({ url: MANIFEST, headers: bearer(grant) })).statusCode).toBe(401);
  });
});
