/**
 * The model grant from a real browser on another origin (issue 15 §1 and §5): a page served from a
 * second loopback listener (another origin) fetches the manifest and a file from the service with
 * `Authorization: Bearer <grant>`, through Chromium's real CORS preflight. Refused (and readable as
 * refused: the 401 carries CORS headers) without a grant, with an expired one, with one bound to
 * another origin. Skips itself, loudly, without Chromium.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { chromiumOrSkip, launchChromium } from '../../../scripts/testing/chromium.js';
import { startTestServer, type TestKey, type TestServer } from '../src/testing.js';
import { signModelGrant } from '../src/domain/model-grant.js';
import { signedInject } from './helpers.js';

type Probe = { status: number; code?: string; bytes?: number; sha256?: string };

describe.skipIf(!chromiumOrSkip())('model grant in Chromium, from another origin', { timeout: 120_000 }, () => {
  let s: TestServer;
  let key: TestKey;
  let app: http.Server;
  let appOrigin: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    s = await startTestServer();
    key = await s.createKey();
    app = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>customer page</title>');
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    // `localhost` vs the service's `127.0.0.1`: another origin, as a customer's page is.
    appOrigin = `http://localhost:${(app.address() as AddressInfo).port}`;
    browser = await launchChromium();
    page = await browser.newPage();
    await page.goto(appOrigin);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => app?.close(r));
    await s?.close();
  });

  async function mint(body: Record<string, unknown>) {
    const res = await signedInject(s.app, key, { method: 'POST', url: '/sdk/v1/models/grant', body });
    expect(res.statusCode).toBe(201);
    return res.json().data as { grant: string; manifestUrl: string; modelsVersion: string };
  }

  /** In the page: the manifest, then its first `.wasm` file, as the capture code fetches them. */
  const probe = (manifestUrl: string, grant: string | null): Promise<Probe[]> =>
    page.evaluate(
      async ({ manifestUrl, grant }) => {
        const headers: Record<string, string> = grant ? { Authorization: `Bearer ${grant}` } : {};
        const out: Probe[] = [];
        const m = await fetch(manifestUrl, { headers, credentials: 'omit' });
        const body = await m.json();
        out.push({ status: m.status, code: body.error?.code });
        // Without a manifest, try a real file's address anyway (the hash is no secret).
        const files: Array<{ name: string; url: string; sha256: string }> = body.data?.files ?? [];
        const wasm = files.find((f) => f.name.endsWith('.wasm'));
        const url = wasm
          ? new URL(wasm.url, manifestUrl).href
          : `${new URL(manifestUrl).origin}/sdk/v1/models/files/${'0'.repeat(64)}`;
        const f = await fetch(url, { headers, credentials: 'omit' });
        const bytes = await f.arrayBuffer();
        const digest = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)))
          .map((b) => b.toString(16).padStart(2, '0'))
          .join('');
        out.push({
          status: f.status,
          bytes: bytes.byteLength,
          sha256: f.ok ? digest : undefined,
          code: f.ok ? undefined : JSON.parse(new TextDecoder().decode(bytes)).error?.code,
        });
        return out;
      },
      { manifestUrl, grant },
    );

  test('.happy a grant bound to the page origin: manifest and a WASM file, the bytes matching their hash', async () => {
    const g = await mint({ origin: appOrigin });
    const [m, f] = await probe(g.manifestUrl, g.grant);
    expect(m.status).toBe(200);
    expect(f.status).toBe(200);
    expect(f.bytes).toBeGreaterThan(100_000);
    const bundle = await s.ctx.modelBundle();
    expect(bundle.byHash.get(f.sha256!)?.name).toMatch(/\.wasm$/);
  });

  test('.security without a grant: 401 unauthorized on the manifest and the file', async () => {
    const g = await mint({});
    const res = await probe(g.manifestUrl, null);
    expect(res.map((r) => [r.status, r.code])).toEqual([
      [401, 'unauthorized'],
      [401, 'unauthorized'],
    ]);
  });

  test('.security a grant bound to another origin: 401 on both', async () => {
    const g = await mint({ origin: 'https://app.example.com' });
    const res = await probe(g.manifestUrl, g.grant);
    expect(res.map((r) => r.status)).toEqual([401, 401]);
  });

  test('.security an expired grant: 401 on both', async () => {
    const now = Math.floor(Date.now() / 1000);
    const mv = (await s.ctx.modelBundle()).modelsVersion;
    const expired = signModelGrant(s.ctx.serverSecret, {
      kid: key.keyId,
      org: key.orgId,
      mv,
      iat: now - 400,
      exp: now - 100,
    });
    const res = await probe(`${s.baseUrl}/sdk/v1/models/manifest`, expired);
    expect(res.map((r) => [r.status, r.code])).toEqual([
      [401, 'unauthorized'],
      [401, 'unauthorized'],
    ]);
  });
});
