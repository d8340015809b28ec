/**
 * The demo on the embedded default (issue 15 §4; CONTRACT.md "Demo page"; CONTRACT-BROWSER "Demo
 * backend routes", "Static files of the page"): the page at `/` only where safe, the `/demo/api/*`
 * backend acting with the development key (which never reaches the page), and `/capture/*` served
 * from the capture directory without traversal. The capture directory is a temp dir with a stub
 * page: these tests are about the serving, not the page.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createTestApp, ManualClock, type TestApp } from '../src/testing.js';
import { createDevelopmentKey } from '../src/cli/serve.js';
import { developmentKey } from '../src/demo/backend.js';
import { setKeyStatus } from '../src/store/orgs-keys.js';
import { goodMeasurement, signedInject } from './helpers.js';

const PAGE = '<!doctype html><title>vitals demo stub</title><script type="module" src="/capture/app.js"></script>';
const SECRET_TEXT = 'outside-the-capture-dir';
let root: string;
let captureDir: string;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-capture-'));
  captureDir = path.join(root, 'browser');
  fs.mkdirSync(path.join(captureDir, 'workers'), { recursive: true });
  fs.writeFileSync(path.join(captureDir, 'demo.html'), PAGE);
  fs.writeFileSync(path.join(captureDir, 'app.js'), 'export const app = 1;\n');
  fs.writeFileSync(path.join(captureDir, 'workers', 'engine.js'), 'self.onmessage = () => {};\n');
  fs.writeFileSync(path.join(captureDir, '.hidden.js'), SECRET_TEXT);
  fs.writeFileSync(path.join(captureDir, 'notes.exe'), SECRET_TEXT);
  fs.writeFileSync(path.join(root, 'secret.js'), SECRET_TEXT);
  fs.symlinkSync(path.join(root, 'secret.js'), path.join(captureDir, 'link.js'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** An app with the development organization and key that `serve` creates on its first start. */
async function demoApp(env: Record<string, string> = {}): Promise<TestApp & { devKeyId: string }> {
  const t = await createTestApp({
    clock: new ManualClock(Date.now()),
    env: { VITALS_CAPTURE_DIR: captureDir, ...env },
  });
  await createDevelopmentKey(t.ctx, () => undefined);
  const dev = await developmentKey(t.ctx);
  return Object.assign(t, { devKeyId: dev!.id });
}

const usageOf = (t: TestApp, keyId: string) =>
  t.ctx.db.db.selectFrom('usage_log').selectAll().where('key_id', '=', keyId).orderBy('time').orderBy('id').execute();

const HOST = '127.0.0.1:8787';
const SELF = `http://${HOST}`;

describe('configuration: where the demo is on', () => {
  test.for([
    [{}, {}, 'loopback'],
    [{ HOST: '::1' }, {}, 'loopback'],
    [{}, { host: 'localhost' }, 'loopback'],
    [{}, { host: '127.0.0.2' }, 'loopback'],
    [{}, { host: '0.0.0.0' }, 'off'],
    [{}, { host: '192.168.1.10' }, 'off'],
    [{ VITALS_DEMO: '1' }, { host: '0.0.0.0' }, 'on'],
    [{ VITALS_DEMO: '0' }, { host: '127.0.0.1' }, 'off'],
  ] as const)('.happy env %j flags %j: %s', ([env, flags, mode]) => {
    expect(loadConfig(env, flags).demo).toBe(mode);
  });

  test('.error VITALS_DEMO must be 1 or 0', () => {
    expect(() => loadConfig({ VITALS_DEMO: 'yes please' })).toThrow(ConfigError);
  });

  test('.happy the capture directory is packages/capture/dist/browser unless VITALS_CAPTURE_DIR says otherwise', () => {
    expect(loadConfig({}).captureDir).toBe(path.resolve(import.meta.dirname, '../../capture/dist/browser'));
    expect(loadConfig({ VITALS_CAPTURE_DIR: captureDir }).captureDir).toBe(captureDir);
  });
});

describe('GET / (the demo page)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await demoApp();
  });
  afterAll(() => t.close());

  test('.happy on a loopback listener: the page, with a self-only CSP and the camera for this origin', async () => {
    const res = await t.app.inject({
      url: '/?mode=cloud&autostart=1&durationSec=20',
      headers: { host: '127.0.0.1:8787' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(PAGE);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("'wasm-unsafe-eval'");
    expect(csp).toContain("frame-ancestors 'none'");
    // Only this origin (and blob:/data:/mediastream: of the page itself): no host of another site.
    expect(csp).not.toMatch(/https?:|\*/);
    expect(res.headers['permissions-policy']).toContain('camera=(self)');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  test('.happy connect-src also names the advertised origin (http and ws), for a page opened under another name', async () => {
    t.ctx.publicUrl = 'http://127.0.0.1:8787';
    try {
      const res = await t.app.inject({ url: '/', headers: { host: 'localhost:8787' } });
      const connect = String(res.headers['content-security-policy'])
        .split('; ')
        .find((d) => d.startsWith('connect-src'));
      expect(connect).toBe("connect-src 'self' blob: data: http://127.0.0.1:8787 ws://127.0.0.1:8787");
    } finally {
      t.ctx.publicUrl = undefined;
    }
  });

  test.for(['localhost:8787', '[::1]:8787', '127.0.0.1'])('.happy loopback Host %s is served', async (host) => {
    expect((await t.app.inject({ url: '/', headers: { host } })).statusCode).toBe(200);
  });

  test.for(['evil.example.com', 'evil.example.com:8787', '10.0.0.5:8787'])(
    '.security Host %s on the loopback default (DNS rebinding) is the plain 404',
    async (host) => {
      for (const [method, url] of [
        ['GET', '/'],
        ['POST', '/demo/api/grant'],
        ['POST', '/demo/api/session'],
      ] as const) {
        const res = await t.app.inject({ method, url, headers: { host } });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json()).toEqual({ ok: false, error: { code: 'not_found', message: expect.any(String) } });
      }
    },
  );
});

describe('the demo off', () => {
  test.for([
    ['VITALS_DEMO=0 on loopback', { VITALS_DEMO: '0' }],
    ['a non-loopback listener', { HOST: '0.0.0.0' }],
  ] as const)('.security %s: / and /demo/api/* are the JSON 404; /capture/* is still served', async ([, env]) => {
    const t = await demoApp(env);
    try {
      for (const [method, url] of [
        ['GET', '/'],
        ['POST', '/demo/api/grant'],
        ['POST', '/demo/api/session'],
        ['POST', '/demo/api/measurements'],
        ['GET', '/demo/api/measurements/meas_0'],
      ] as const) {
        const res = await t.app.inject({ method, url });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json().error.code).toBe('not_found');
      }
      expect((await t.app.inject({ url: '/capture/app.js' })).statusCode).toBe(200);
      expect(await usageOf(t, t.devKeyId)).toHaveLength(0);
    } finally {
      await t.close();
    }
  });

  test('.happy VITALS_DEMO=1 serves any Host', async () => {
    const t = await demoApp({ VITALS_DEMO: '1', HOST: '0.0.0.0' });
    try {
      const res = await t.app.inject({ url: '/', headers: { host: 'vitals.example.com' } });
      expect(res.statusCode).toBe(200);
      const g = await t.app.inject({
        method: 'POST',
        url: '/demo/api/grant',
        headers: { host: 'vitals.example.com', origin: 'http://vitals.example.com' },
      });
      expect(g.statusCode).toBe(201);
    } finally {
      await t.close();
    }
  });

  test('.error the page not built: 404 naming the capture package', async () => {
    const t = await demoApp({ VITALS_CAPTURE_DIR: path.join(root, 'missing') });
    try {
      const res = await t.app.inject({ url: '/' });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.message).toContain('demo page is not built');
    } finally {
      await t.close();
    }
  });
});

describe('GET /capture/*', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await demoApp();
  });
  afterAll(() => t.close());

  test('.happy a module with its type, revalidation caching, a strong ETag (304) and CORS for any origin', async () => {
    const res = await t.app.inject({ url: '/capture/app.js', headers: { origin: 'https://shop.example.org' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('export const app = 1;\n');
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['access-control-allow-origin']).toBe('https://shop.example.org');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    const etag = String(res.headers.etag);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await t.app.inject({ url: '/capture/app.js', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    const sub = await t.app.inject({ url: '/capture/workers/engine.js' });
    expect(sub.statusCode).toBe(200);
    expect(sub.body).toContain('onmessage');
  });

  test.for([
    '/capture/../secret.js',
    '/capture/..%2Fsecret.js',
    '/capture/%2e%2e/secret.js',
    '/capture/%2e%2e%2fsecret.js',
    '/capture/workers/../../secret.js',
    '/capture/workers/..%2F..%2Fsecret.js',
    '/capture/.hidden.js',
    '/capture/link.js',
    '/capture/notes.exe',
    '/capture/',
    '/capture/workers',
    '/capture/%00app.js',
    '/capture/app.js%00.js',
    `/capture/${'a'.repeat(300)}.js`,
    '/capture//etc/passwd',
  ])('.security %s is a 404 that serves nothing', async (url) => {
    const res = await t.app.inject({ url });
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain(SECRET_TEXT);
    expect(res.json().error.code).toBe('not_found');
  });
});

describe('/demo/api/* (the backend role, with the development key)', () => {
  let t: TestApp & { devKeyId: string };
  beforeAll(async () => {
    t = await demoApp();
  });
  afterAll(() => t.close());

  const post = (url: string, body?: unknown, headers: Record<string, string> = { origin: SELF }) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { host: HOST, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });

  test(".happy grant: bound to the page origin; the manifest answers it; the call is the dev key's usage row", async () => {
    const res = await post('/demo/api/grant', {});
    expect(res.statusCode).toBe(201);
    const d = res.json().data;
    expect(d.origin).toBe(SELF);
    expect(d.manifestUrl).toBe(`${SELF}/sdk/v1/models/manifest`);
    const m = await t.app.inject({
      url: '/sdk/v1/models/manifest',
      headers: { authorization: `Bearer ${d.grant}`, origin: SELF },
    });
    expect(m.statusCode).toBe(200);
    expect(m.json().data.modelsVersion).toBe(d.modelsVersion);
    const rows = await usageOf(t, t.devKeyId);
    expect(rows.at(-1)).toMatchObject({ endpoint: '/sdk/v1/models/grant', method: 'POST', status: 'success' });
  });

  test('.happy session: the session object of POST /sdk/v1/cloud/sessions for the page', async () => {
    const res = await post('/demo/api/session', { durationSec: 20 });
    expect(res.statusCode).toBe(201);
    const d = res.json().data;
    expect(Object.keys(d).sort()).toEqual(['frameSpec', 'maxDurationSec', 'sessionId', 'sessionToken', 'wsUrl']);
    expect(d.maxDurationSec).toBe(20);
    expect(d.wsUrl).toBe(`ws://${HOST}/sdk/v1/cloud/stream`);
    expect(d.sessionToken).toMatch(/^vst1\./);
    const job = await t.ctx.db.db.selectFrom('cloud_jobs').selectAll().where('id', '=', d.sessionId).executeTakeFirst();
    expect(job).toMatchObject({ key_id: t.devKeyId, mode: 'stream', status: 'pending', platform: 'web' });
  });

  test('.happy measurements: the stored on-device result, identical to the GET', async () => {
    const res = await post(
      '/demo/api/measurements',
      goodMeasurement({ sdkVersion: '0.1.0', modelsVersion: 'human-3.3.6+abc' }),
    );
    expect(res.statusCode).toBe(201);
    const stored = res.json().data;
    expect(stored).toMatchObject({
      origin: 'on_device',
      attested: false,
      keyId: t.devKeyId,
      modelsVersion: 'human-3.3.6+abc',
    });
    expect(stored.id).toMatch(/^meas_/);
    const got = await t.app.inject({ url: `/demo/api/measurements/${stored.id}` });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual({ ok: true, data: stored });
  });

  test.for([
    ['durationSec 10', '/demo/api/session', { durationSec: 10 }, 400, 'invalid_duration'],
    ['durationSec 181', '/demo/api/session', { durationSec: 181 }, 400, 'invalid_duration'],
    ['a measurement without source', '/demo/api/measurements', { durationSec: 30 }, 400, 'validation_error'],
    ['a JSON array', '/demo/api/measurements', [1], 400, 'validation_error'],
  ] as const)(".error %s: the signed route's own answer", async ([, url, body, status, code]) => {
    const res = await post(url, body);
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });

  test('.error an unknown or malformed measurement id is the plain 404', async () => {
    for (const id of ['meas_000000000000000000000000', '..%2F..%2Fhealth', 'x'.repeat(65)]) {
      const res = await t.app.inject({ url: `/demo/api/measurements/${id}` });
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
  });

  test('.security a request from another origin is 403 forbidden and spends nothing', async () => {
    const before = (await usageOf(t, t.devKeyId)).length;
    for (const [url, body] of [
      ['/demo/api/grant', {}],
      ['/demo/api/session', { durationSec: 20 }],
      ['/demo/api/measurements', goodMeasurement()],
    ] as const) {
      const res = await post(url, body, { origin: 'https://evil.example.net' });
      expect(res.statusCode, url).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
    }
    const get = await t.app.inject({ url: '/demo/api/measurements/meas_1', headers: { origin: 'null' } });
    expect(get.statusCode).toBe(403);
    expect((await usageOf(t, t.devKeyId)).length).toBe(before);
  });

  test('.security no answer carries the key secret, its digest or a signature', async () => {
    const key = (await t.ctx.keys.get(t.devKeyId))!;
    for (const res of [
      await post('/demo/api/grant', {}),
      await post('/demo/api/session', { durationSec: 20 }),
      await post('/demo/api/measurements', goodMeasurement()),
    ]) {
      const text = res.body + JSON.stringify(res.headers);
      expect(text).not.toContain(key.secretSha256);
      expect(text.toLowerCase()).not.toContain('x-signature');
    }
  });
});

describe('/demo/api/* follows the development key', () => {
  test('.security a disabled development key: 403 key_disabled, as for the key itself', async () => {
    const t = await demoApp();
    try {
      await setKeyStatus(t.ctx.db.db, t.devKeyId, 'disabled');
      t.ctx.keys.invalidate();
      const res = await t.app.inject({ method: 'POST', url: '/demo/api/grant', headers: { host: HOST, origin: SELF } });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('key_disabled');
    } finally {
      await t.close();
    }
  });

  test('.security rate-limited: 429 with the RateLimit headers of the development key', async () => {
    const t = await demoApp();
    try {
      await t.ctx.db.db.updateTable('api_keys').set({ rate_limit_per_min: 1 }).where('id', '=', t.devKeyId).execute();
      t.ctx.keys.invalidate();
      expect((await t.app.inject({ method: 'POST', url: '/demo/api/grant' })).statusCode).toBe(201);
      const res = await t.app.inject({ method: 'POST', url: '/demo/api/grant' });
      expect(res.statusCode).toBe(429);
      expect(res.json().error.code).toBe('rate_limited');
      expect(res.headers['ratelimit-limit']).toBe('1');
      const rows = await usageOf(t, t.devKeyId);
      expect(rows.map((r) => r.status)).toEqual(['success', 'rate_limited']);
    } finally {
      await t.close();
    }
  });

  test('.error no development organization (a store set up by hand): 404 naming what is missing', async () => {
    const t = await createTestApp({ env: { VITALS_CAPTURE_DIR: captureDir } });
    try {
      const other = await t.createKey();
      const res = await t.app.inject({ method: 'POST', url: '/demo/api/grant' });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.message).toContain('development key');
      // Other keys are never borrowed.
      expect(await usageOf(t, other.keyId)).toHaveLength(0);
      expect(
        (
          await signedInject(t.app, other, {
            method: 'POST',
            url: '/sdk/v1/models/grant',
            body: {},
            timestamp: Math.floor(t.clock.now() / 1000),
          })
        ).statusCode,
      ).toBe(201);
    } finally {
      await t.close();
    }
  });
});
