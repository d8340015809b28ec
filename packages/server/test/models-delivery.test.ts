/**
 * How the model bundle and the capture code are delivered (issue 15 §5, docs/decisions.md
 * "Compression" and "Model grants"): gzip where it pays, the same bytes after decoding, a separate
 * ETag per encoding; and the bundle routes' per-address and per-grant limits (spec: Rate limits,
 * `rate_limited` with `Retry-After`).
 */
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect } from 'vitest';
import { json, test, type World } from './helpers.js';
import { MODEL_DOWNLOADS_PER_MIN } from '../src/routes/models.js';
import { MIN_SAVING } from '../src/gzip-cache.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const GZIP = { 'accept-encoding': 'gzip, deflate, br' };

async function grantAndFiles(w: World) {
  const res = await w.call({ method: 'POST', url: '/sdk/v1/models/grant', body: {} });
  expect(res.statusCode, res.body).toBe(201);
  const grant = json(res).data.grant as string;
  const m = await w.app.inject({ url: '/sdk/v1/models/manifest', headers: { authorization: `Bearer ${grant}` } });
  const files = json(m).data.files as Array<{ name: string; url: string; sha256: string; bytes: number }>;
  return { grant, files };
}

describe('gzip', () => {
  test('.happy model files: gzipped where it pays (WASM, JSON, weights), identical after decoding, own ETag', async ({
    world,
  }) => {
    const { grant, files } = await grantAndFiles(world);
    const encodings: Record<string, string | undefined> = {};
    for (const f of files) {
      const res = await world.app.inject({ url: f.url, headers: { authorization: `Bearer ${grant}`, ...GZIP } });
      expect(res.statusCode, f.name).toBe(200);
      expect(res.headers.vary).toContain('Accept-Encoding');
      const enc = res.headers['content-encoding'] as string | undefined;
      encodings[f.name] = enc;
      const body = enc === 'gzip' ? gunzipSync(res.rawPayload) : res.rawPayload;
      expect(sha(body), f.name).toBe(f.sha256);
      if (enc === 'gzip') {
        expect(res.rawPayload.length, f.name).toBeLessThanOrEqual(f.bytes * (1 - MIN_SAVING));
        expect(res.headers.etag).toBe(`"${f.sha256}-gz"`);
      } else expect(res.headers.etag).toBe(`"${f.sha256}"`);
      // Either ETag revalidates.
      const again = await world.app.inject({
        url: f.url,
        headers: { authorization: `Bearer ${grant}`, 'if-none-match': String(res.headers.etag), ...GZIP },
      });
      expect(again.statusCode, f.name).toBe(304);
    }
    expect(encodings['tfjs-backend-wasm.wasm']).toBe('gzip');
    expect(encodings['blazeface.json']).toBe('gzip');
    expect(encodings['facemesh.bin']).toBe('gzip');
    // Without Accept-Encoding, or with gzip refused, the plain bytes.
    for (const headers of [{}, { 'accept-encoding': 'gzip;q=0, identity' }]) {
      const wasm = files.find((f) => f.name === 'tfjs-backend-wasm.wasm')!;
      const res = await world.app.inject({ url: wasm.url, headers: { authorization: `Bearer ${grant}`, ...headers } });
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(sha(res.rawPayload)).toBe(wasm.sha256);
    }
  });

  test('.happy the capture code is gzipped (its largest file, Human with tfjs, to under half)', async ({ world }) => {
    const dir = world.ctx.config.captureDir;
    const largest = readdirSync(dir)
      .filter((f) => f.endsWith('.js'))
      .sort((a, b) => statSync(path.join(dir, b)).size - statSync(path.join(dir, a)).size)[0];
    const url = `/capture/${largest}`;
    const plain = await world.app.inject({ url });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const res = await world.app.inject({ url, headers: GZIP });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(gunzipSync(res.rawPayload).equals(plain.rawPayload)).toBe(true);
    expect(res.rawPayload.length).toBeLessThan(plain.rawPayload.length * 0.5);
    expect(res.headers.etag).not.toBe(plain.headers.etag);
  });
});

describe('model download limits', () => {
  test('.error per grant: past the limit a minute, 429 rate_limited with Retry-After; the next minute serves', async ({
    world,
  }) => {
    const { grant, files } = await grantAndFiles(world); // the manifest counted once
    const auth = { authorization: `Bearer ${grant}` };
    for (let i = 1; i < MODEL_DOWNLOADS_PER_MIN.grant; i++) {
      const res = await world.app.inject({ url: files[i % files.length].url, headers: auth });
      expect(res.statusCode).toBe(200);
    }
    const over = await world.app.inject({ url: files[0].url, headers: auth });
    expect(over.statusCode).toBe(429);
    expect(json(over).error.code).toBe('rate_limited');
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(over.headers['ratelimit-limit']).toBe(String(MODEL_DOWNLOADS_PER_MIN.grant));
    expect(over.rawPayload.toString()).not.toContain('"sha256"');
    // Another grant of the same key is its own budget (minted a second later: another token).
    world.clock.advance(1000);
    const other = await grantAndFiles(world);
    expect(
      (await world.app.inject({ url: other.files[0].url, headers: { authorization: `Bearer ${other.grant}` } }))
        .statusCode,
    ).toBe(200);
    world.clock.advance(61_000);
    expect((await world.app.inject({ url: files[0].url, headers: auth })).statusCode).toBe(200);
  });

  test('.security per address: invalid grants count, and past the limit even a valid grant waits', async ({
    world,
  }) => {
    const { grant, files } = await grantAndFiles(world);
    const from = (ip: string, authorization: string) =>
      world.app.inject({ url: files[0].url, headers: { authorization }, remoteAddress: ip });
    for (let i = 0; i < MODEL_DOWNLOADS_PER_MIN.address; i++)
      expect((await from('203.0.113.7', 'Bearer not-a-grant')).statusCode).toBe(401);
    const over = await from('203.0.113.7', `Bearer ${grant}`);
    expect(over.statusCode).toBe(429);
    expect(json(over).error.code).toBe('rate_limited');
    expect((await from('203.0.113.8', `Bearer ${grant}`)).statusCode).toBe(200);
  });
});
