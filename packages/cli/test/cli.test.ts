/**
 * `vitals` against the real server: every exit code of the spec's table that the core server can
 * produce, help for every command, the usage-log tail. In-process through `runCli` (support/run.ts),
 * except the one test of the executable itself (follow, then SIGINT).
 */
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdStoreWriteLock, startTestServer, waitFor } from '@vitals/server/testing';
import { credsEnv, runVitals, spawnVitals } from './support/run.js';

type Server = Awaited<ReturnType<typeof startTestServer>>;
let server: Server;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), 'vitals-cli-'));
});
afterAll(async () => {
  await server?.close();
});

describe('configuration and usage (exit 2)', () => {
  it('no credentials: exit 2 naming the variables', async () => {
    const r = await runVitals(['auth', 'test']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/VITALS_KEY_ID and VITALS_KEY_SECRET/);
  });

  it('measure without --consent: exit 2, before any call', async () => {
    const video = join(dir, 'a.mp4');
    writeFileSync(video, 'x');
    const r = await runVitals(['measure', video], credsEnv({ keyId: 'k', secret: 's' }, 'http://127.0.0.1:1'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--consent/);
  });

  it.each(['clip.avi', 'clip.mkv', 'clip'])('measure %s (not .mp4/.mov/.webm): exit 2', async (name) => {
    const video = join(dir, name);
    writeFileSync(video, 'x');
    const r = await runVitals(
      ['measure', video, '--consent'],
      credsEnv({ keyId: 'k', secret: 's' }, 'http://127.0.0.1:1'),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\.mp4, \.mov or \.webm/);
  });

  it('measure a file that does not exist: exit 2', async () => {
    const r = await runVitals(
      ['measure', join(dir, 'missing.mov'), '--consent'],
      credsEnv({ keyId: 'k', secret: 's' }, 'http://127.0.0.1:1'),
    );
    expect(r.code).toBe(2);
  });

  it('unknown command or option: exit 2', async () => {
    expect((await runVitals(['frobnicate'])).code).toBe(2);
    expect((await runVitals(['auth', 'test', '--bogus'])).code).toBe(2);
  });

  it('--help for every command, with examples, exit 0', async () => {
    for (const args of [['--help'], ['auth', 'test', '--help'], ['measure', '--help'], ['logs', 'tail', '--help']]) {
      const r = await runVitals(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(/Examples:/);
    }
  });
});

describe('auth test', () => {
  it('valid credentials: exit 0 and the key facts', async () => {
    const key = await server.createKey({ rateLimitPerMin: 30 });
    const r = await runVitals(['auth', 'test'], credsEnv(key, server.baseUrl));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Credentials OK/);
    expect(r.stdout).toContain(key.keyId);
    expect(r.stdout).toMatch(/Rate limit\s+30\/min/);
    expect(r.stderr).not.toMatch(/warning/);
    const j = await runVitals(['auth', 'test', '--json'], credsEnv(key, server.baseUrl));
    expect(JSON.parse(j.stdout)).toMatchObject({ keyId: key.keyId, status: 'active' });
  });

  it('a wrong secret: exit 3', async () => {
    const key = await server.createKey();
    const r = await runVitals(['auth', 'test'], credsEnv({ ...key, secret: 'sk_wrong' }, server.baseUrl));
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/unauthorized/);
  });

  it('an unknown key id: exit 3', async () => {
    const r = await runVitals(
      ['auth', 'test'],
      credsEnv({ keyId: 'key_000000000000000000000000', secret: 'x' }, server.baseUrl),
    );
    expect(r.code).toBe(3);
  });

  it('a disabled key: exit 3 (credentials that do not work)', async () => {
    const key = await server.createKey({ status: 'disabled' });
    const r = await runVitals(['auth', 'test'], credsEnv(key, server.baseUrl));
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/key_disabled/);
  });

  it('rate limited: exit 7', async () => {
    const key = await server.createKey({ rateLimitPerMin: 1 });
    expect((await runVitals(['auth', 'test'], credsEnv(key, server.baseUrl))).code).toBe(0);
    const r = await runVitals(['auth', 'test'], credsEnv(key, server.baseUrl));
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/rate_limited.*retry in \d+ s/);
  });

  it('an unreachable service: exit 1', async () => {
    const r = await runVitals(['auth', 'test'], credsEnv({ keyId: 'k', secret: 's' }, 'http://127.0.0.1:1'));
    expect(r.code).toBe(1);
  });

  it("the service's database away through every retry (503 service_unavailable): exit 1, with the retry hint", async () => {
    // A real outage: the store's write lock held elsewhere; on PostgreSQL the writes give up after 250 ms.
    const s = await startTestServer({ env: { VITALS_DB_STATEMENT_TIMEOUT_MS: '250' } });
    try {
      const key = await s.createKey();
      const release = await holdStoreWriteLock(s);
      try {
        const r = await runVitals(['auth', 'test'], credsEnv(key, s.baseUrl));
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/error: service_unavailable: .*\(request req_[0-9a-f]{24}\); retry in 1 s/);
      } finally {
        await release();
      }
    } finally {
      await s.close();
    }
  });
});

describe('clock drift', () => {
  it('warns on stderr when the local clock is more than 30 s off the server', async () => {
    const skewed = await startTestServer({ clock: { now: () => Date.now() + 90_000 } });
    try {
      const key = await skewed.createKey();
      const r = await runVitals(['auth', 'test'], credsEnv(key, skewed.baseUrl));
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/warning: local clock is 9\d s behind/);
      expect(r.stderr.match(/warning/g)).toHaveLength(1);
    } finally {
      await skewed.close();
    }
  });
});

describe('logs tail', () => {
  it('--json --no-follow prints newline-delimited rows, successes and refusals', async () => {
    const key = await server.createKey();
    const env = credsEnv(key, server.baseUrl);
    await runVitals(['auth', 'test'], env);
    await runVitals(['auth', 'test'], { ...env, VITALS_KEY_SECRET: 'wrong' });
    const r = await runVitals(['logs', 'tail', '--json', '--no-follow'], env);
    expect(r.code).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; errorCode: string | null; endpoint: string });
    expect(rows.map((x) => [x.endpoint, x.status, x.errorCode])).toEqual([
      ['/sdk/v1/auth/test', 'success', null],
      ['/sdk/v1/auth/test', 'unauthorized', 'invalid_signature'],
    ]);
  });

  // The one test that runs the real executable: following and SIGINT belong to the process.
  it('follows new rows as they arrive, and Ctrl-C ends it with exit 0', async () => {
    const key = await server.createKey();
    const env = credsEnv(key, server.baseUrl);
    expect((await runVitals(['auth', 'test'], env)).code).toBe(0);
    const child = spawnVitals(['logs', 'tail', '--json', '--interval', '1'], env);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const lines = () => out.trim().split('\n').filter(Boolean);
    // The tail is following once it printed the row that was there; a row made after that must follow.
    await waitFor(() => lines().length >= 1, { timeoutMs: 30_000, what: 'the first row' });
    expect((await runVitals(['auth', 'test', '--json'], env)).code).toBe(0);
    await waitFor(() => lines().length >= 2, { timeoutMs: 10_000, what: 'the new row' });
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    for (const line of lines().slice(0, 2))
      expect(JSON.parse(line)).toMatchObject({ endpoint: '/sdk/v1/auth/test', status: 'success' });
  });

  it('a bad --since is a usage error', async () => {
    const r = await runVitals(
      ['logs', 'tail', '--since', 'yesterday-ish'],
      credsEnv({ keyId: 'k', secret: 's' }, server.baseUrl),
    );
    expect(r.code).toBe(2);
  });
});
