/**
 * The operator command line exactly as CONTRACT.md gives it. In-process through `runServerCli` (what
 * the executable runs, with captured output), except the first `serve`, which runs the real
 * executable on the source (tsx, `source` export condition) so the test never depends on a stale build.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signRequest } from '@vitals/protocol';
import { runServerCli } from '../src/cli/main.js';
import { waitFor } from '../src/testing.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = path.join(ROOT, 'packages/server/src/bin.ts');
const NODE_ARGS = ['--conditions=source', '--import', 'tsx', BIN];

let dataDir: string;

/** `vitals-server <args> --data-dir <the test's dir>` in-process. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runServerCli([...args, '--data-dir', dataDir], {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: { LOG_LEVEL: 'silent' },
    untilStopped: () => new Promise(() => undefined),
  });
  return { code, stdout, stderr };
}

interface Served {
  baseUrl: string;
  output: () => string;
  stop(): Promise<void>;
}

/** `serve --port 0` in-process; resolves once it printed its address. */
async function serve(): Promise<Served> {
  let out = '';
  let stopServing!: () => void;
  const stopped = new Promise<void>((r) => (stopServing = r));
  const running = runServerCli(['serve', '--port', '0', '--data-dir', dataDir], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (out += s) },
    env: { LOG_LEVEL: 'silent' },
    untilStopped: () => stopped,
  });
  const exited = running.then((code) => {
    throw new Error(`serve exited ${code}:\n${out}`);
  });
  exited.catch(() => undefined); // once it is running, stop() expects the exit
  const m = await Promise.race([
    waitFor(() => /listening on (http:\/\/[^\s]+)/.exec(out), { timeoutMs: 30_000 }),
    exited,
  ]);
  return {
    baseUrl: m[1],
    output: () => out,
    async stop() {
      stopServing();
      expect(await running).toBe(0);
    },
  };
}

/** The real executable's `serve --port 0`; resolves once the process prints its address. */
function spawnServe(): Promise<Served> {
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'silent' };
  delete env.VITALS_DATABASE_URL;
  delete env.VITALS_DATA_DIR;
  const child = spawn(process.execPath, [...NODE_ARGS, 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 60_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          baseUrl: m[1],
          output: () => out,
          stop: () =>
            new Promise<void>((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', (code) => reject(new Error(`serve exited ${code}:\n${out}`)));
  });
}

async function signedFetch(
  baseUrl: string,
  key: { keyId: string; secret: string },
  method: string,
  p: string,
  body?: string,
) {
  const headers: Record<string, string> = {
    ...(await signRequest({ keyId: key.keyId, secret: key.secret, method, path: p, body })),
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return fetch(`${baseUrl}${p}`, { method, headers, body });
}

beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-cli-'));
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

describe('vitals-server', { timeout: 120_000 }, () => {
  let devKey: { keyId: string; secret: string };

  // The one test of the real executable.
  test('serve --port 0 prints "listening on http://H:P" and, on the first start, a development key', async () => {
    const s = await spawnServe();
    try {
      expect(s.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const id = /VITALS_KEY_ID=(\S+)/.exec(s.output());
      const secret = /VITALS_KEY_SECRET=(\S+)/.exec(s.output());
      expect(id && secret).toBeTruthy();
      devKey = { keyId: id![1], secret: secret![1] };
      expect((await fetch(`${s.baseUrl}/health`)).status).toBe(200);
      const res = await signedFetch(s.baseUrl, devKey, 'POST', '/sdk/v1/auth/test');
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).data).toMatchObject({ keyId: devKey.keyId, mode: 'test' });
      expect(fs.existsSync(path.join(dataDir, 'vitals.db'))).toBe(true);
    } finally {
      await s.stop();
    }
  });

  test('a second start does not print a key again', async () => {
    const s = await serve();
    try {
      expect(s.output()).not.toContain('VITALS_KEY_SECRET');
    } finally {
      await s.stop();
    }
  });

  test('migrate applies migrations and exits 0 (idempotent)', async () => {
    const r = await cli('migrate');
    expect(r.code).toBe(0);
  });

  test('orgs create --json prints {"orgId"}; keys create --org --json prints {"keyId","secret","orgId"}', async () => {
    const org = await cli('orgs', 'create', '--name', 'Acme', '--token-balance', '25', '--json');
    expect(org.code).toBe(0);
    const { orgId } = JSON.parse(org.stdout);
    expect(Object.keys(JSON.parse(org.stdout))).toEqual(['orgId']);
    expect(orgId).toMatch(/^org_/);

    const k = await cli(
      'keys',
      'create',
      '--org',
      orgId,
      '--rate-limit-per-min',
      '10',
      '--features',
      'hrv,bp',
      '--json',
    );
    expect(k.code).toBe(0);
    const key = JSON.parse(k.stdout);
    expect(Object.keys(key).sort()).toEqual(['keyId', 'orgId', 'secret']);
    expect(key.orgId).toBe(orgId);

    const s = await serve();
    try {
      const res = await signedFetch(s.baseUrl, key, 'POST', '/sdk/v1/auth/test');
      expect(res.status).toBe(200);
      const d = ((await res.json()) as any).data;
      expect(d).toMatchObject({
        keyId: key.keyId,
        features: ['hrv', 'bp'],
        limits: { rateLimitPerMin: 10 },
        tokenBalanceUsd: 25,
        organization: { id: orgId, name: 'Acme' },
      });

      // keys disable works while the server runs and takes effect within a second (CLARIFICATIONS 9).
      // Polled every 400 ms: the key allows 10 calls a minute, and every poll is one.
      expect((await cli('keys', 'disable', key.keyId)).code).toBe(0);
      let status = 0;
      const authStatus = async () => (status = (await signedFetch(s.baseUrl, key, 'POST', '/sdk/v1/auth/test')).status);
      await waitFor(async () => (await authStatus()) === 403, { timeoutMs: 1500, intervalMs: 400 }).catch(
        () => undefined,
      );
      expect(status).toBe(403);
      expect((await cli('keys', 'enable', key.keyId)).code).toBe(0);
      await waitFor(async () => (await authStatus()) === 200, { timeoutMs: 1500, intervalMs: 400 }).catch(
        () => undefined,
      );
      expect(status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  test('keys create without --org makes a new organization', async () => {
    const r = await cli('keys', 'create', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).orgId).toMatch(/^org_/);
  });

  test.concurrent.for([
    ['orgs create without --name', ['orgs', 'create', '--json']],
    ['keys create with an unknown org', ['keys', 'create', '--org', 'org_nope', '--json']],
    ['keys create with an unknown feature', ['keys', 'create', '--features', 'telepathy', '--json']],
    ['keys disable of an unknown key', ['keys', 'disable', 'key_nope']],
    ['an unknown command', ['frobnicate']],
    ['an unknown flag', ['orgs', 'create', '--name', 'x', '--colour', 'red']],
  ])('%s exits 2 with a message', async ([, args]) => {
    const r = await cli(...(args as string[]));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error:/);
  });
});
