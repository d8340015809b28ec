/**
 * `vitals-server serve` as `npm start` runs it (a real process on the source; scripts/testing/serve.ts):
 * the demo page at `/` on the loopback default, its backend over real HTTP with a real browser-like
 * Origin, the model files with the demo's grant; and `VITALS_DEMO=0` turning it off.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServe } from '../../../scripts/testing/serve.js';

const PAGE = '<!doctype html><title>stub</title>';

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-demo-serve-'));
  fs.mkdirSync(path.join(tmp, 'capture'));
  fs.writeFileSync(path.join(tmp, 'capture', 'demo.html'), PAGE);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** serve with a stub capture directory; VITALS_DEMO only as given. */
const serve = (env: Record<string, string>) =>
  startServe({ LOG_LEVEL: 'silent', VITALS_CAPTURE_DIR: path.join(tmp, 'capture'), VITALS_DEMO: '', ...env });

describe('npm start: the demo on the embedded default', { timeout: 120_000 }, () => {
  test('.happy on 127.0.0.1: the page at /, a grant for the page origin, the model files with it', async () => {
    const s = await serve({});
    try {
      const page = await fetch(`${s.baseUrl}/?mode=on-device`);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe(PAGE);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");

      const g = await fetch(`${s.baseUrl}/demo/api/grant`, {
        method: 'POST',
        headers: { origin: s.baseUrl, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(g.status).toBe(201);
      const grant = ((await g.json()) as any).data;
      expect(grant.origin).toBe(s.baseUrl);
      expect(grant.manifestUrl).toBe(`${s.baseUrl}/sdk/v1/models/manifest`);
      const headers = { authorization: `Bearer ${grant.grant}`, origin: s.baseUrl };
      const m = await fetch(grant.manifestUrl, { headers });
      expect(m.status).toBe(200);
      const files = ((await m.json()) as any).data.files as Array<{ name: string; url: string; bytes: number }>;
      const wasm = files.find((f) => f.name === 'tfjs-backend-wasm-simd.wasm')!;
      const res = await fetch(new URL(wasm.url, grant.manifestUrl), { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/wasm');
      expect((await res.arrayBuffer()).byteLength).toBe(wasm.bytes);
      expect((await fetch(new URL(wasm.url, grant.manifestUrl))).status).toBe(401);
      // serve prints where the page is, after the "listening on" line (written before any request is served).
      expect(s.output()).toContain(`demo: ${s.baseUrl}/`);
    } finally {
      await s.stop();
    }
  });

  test('.security VITALS_DEMO=0: / is the JSON 404 and the demo backend does not exist', async () => {
    const s = await serve({ VITALS_DEMO: '0' });
    try {
      const page = await fetch(`${s.baseUrl}/`);
      expect(page.status).toBe(404);
      expect(((await page.json()) as any).error.code).toBe('not_found');
      expect((await fetch(`${s.baseUrl}/demo/api/grant`, { method: 'POST' })).status).toBe(404);
      expect(s.output()).not.toContain('demo:');
    } finally {
      await s.stop();
    }
  });
});
