/**
 * Serving the console's pages at /console (issue 16, "How it is built"): files with their content
 * types, the SPA fallback, a strict CSP, no way out of the directory. The directory is a temp dir
 * standing in for packages/console/dist (VITALS_CONSOLE_DIR).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createWorld, type World } from './helpers.js';
import { resolveInside } from '../src/console/static.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-console-dist-'));
const INDEX = '<!doctype html><title>Console</title><script type="module" src="/console/assets/app-1a2b.js"></script>';
let w: World;

beforeAll(async () => {
  fs.mkdirSync(path.join(dir, 'assets'));
  fs.writeFileSync(path.join(dir, 'index.html'), INDEX);
  fs.writeFileSync(path.join(dir, 'assets', 'app-1a2b.js'), 'console.log(1)');
  fs.writeFileSync(path.join(dir, 'assets', 'app-1a2b.css'), 'body{}');
  fs.writeFileSync(path.join(dir, 'favicon.svg'), '<svg/>');
  fs.writeFileSync(path.join(dir, '.env'), 'SECRET=1');
  // A file beside the directory, which no request may reach.
  fs.writeFileSync(path.join(path.dirname(dir), `${path.basename(dir)}-secret.txt`), 'secret');
  w = await createWorld({ env: { VITALS_CONSOLE_DIR: dir } });
});
afterAll(async () => {
  await w?.close();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(path.join(path.dirname(dir), `${path.basename(dir)}-secret.txt`), { force: true });
});

const get = (url: string) => w.app.inject({ method: 'GET', url });

describe('files and the SPA fallback', () => {
  test.each([
    ['/console', 'text/html; charset=utf-8', INDEX, 'no-cache'],
    ['/console/', 'text/html; charset=utf-8', INDEX, 'no-cache'],
    ['/console/keys', 'text/html; charset=utf-8', INDEX, 'no-cache'],
    ['/console/users/key_1/ada?tab=history', 'text/html; charset=utf-8', INDEX, 'no-cache'],
    [
      '/console/assets/app-1a2b.js',
      'text/javascript; charset=utf-8',
      'console.log(1)',
      'public, max-age=31536000, immutable',
    ],
    ['/console/assets/app-1a2b.css', 'text/css; charset=utf-8', 'body{}', 'public, max-age=31536000, immutable'],
    ['/console/favicon.svg', 'image/svg+xml', '<svg/>', 'no-cache'],
  ])('GET %s -> 200 %s', async (url, type, body, cache) => {
    const res = await get(url);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(type);
    expect(res.body).toBe(body);
    expect(res.headers['cache-control']).toBe(cache);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
  });

  test.each([
    ['a missing asset', '/console/assets/missing.js'],
    ['a dot file', '/console/.env'],
    ['dot-dot', '/console/../package.json'],
    ['encoded dot-dot', '/console/%2e%2e/%2e%2e/package.json'],
    ['encoded slash', '/console/..%2f..%2fpackage.json'],
    ['a sibling of the directory', `/console/..%2f${path.basename(dir)}-secret.txt`],
    ['backslash', '/console/..%5c..%5cpackage.json'],
    ['NUL', '/console/index.html%00.js'],
  ])('%s is a plain 404', async (_name, url) => {
    const res = await get(url);
    expect(res.statusCode).toBe(404);
    expect(res.body).not.toContain('secret');
    expect(res.body).not.toContain('SECRET');
  });

  test('resolveInside keeps every path inside the root', () => {
    for (const p of ['../x', 'a/../../x', '%2e%2e/x', 'a%2fb', 'a\\b', '.git/config', 'a/./b'])
      expect(resolveInside(dir, p), p).toBeUndefined();
    expect(resolveInside(dir, 'assets/app-1a2b.js')).toBe(path.join(dir, 'assets', 'app-1a2b.js'));
  });
});

test('without a built console, /console is a 404 that says so', async () => {
  const bare = await createWorld({ env: { VITALS_CONSOLE_DIR: path.join(dir, 'nothing-here') } });
  try {
    const res = await bare.app.inject({ url: '/console/keys' });
    expect(res.statusCode).toBe(404);
    expect(JSON.parse(res.body).error.message).toMatch(/not built/);
  } finally {
    await bare.close();
  }
});
