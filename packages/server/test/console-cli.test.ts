/**
 * `vitals-server accounts create --email E --org ORG --password-stdin --json` exactly as
 * CONTRACT.md gives it, run as a real process on the source; then a person signs in to the served
 * console API with that password (issue 16, "Done when").
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const NODE_ARGS = ['--conditions=source', '--import', 'tsx', path.join(ROOT, 'packages/server/src/bin.ts')];
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-accounts-'));
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

const env = (): NodeJS.ProcessEnv => {
  const e: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'silent' };
  delete e.VITALS_DATABASE_URL;
  delete e.VITALS_DATA_DIR;
  return e as NodeJS.ProcessEnv;
};

function cli(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args, '--data-dir', dataDir], { cwd: ROOT, env: env() });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  if (stdin !== undefined) child.stdin.end(stdin);
  else child.stdin.end();
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code: code ?? 1, stdout, stderr })));
}

function serve(): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [...NODE_ARGS, 'serve', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    env: env(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 60_000);
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        baseUrl: m[1],
        stop: () =>
          new Promise<void>((done) => {
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  });
}

test('accounts create, then sign in at the served console API', { timeout: 180_000 }, async () => {
  const made = await cli(
    ['accounts', 'create', '--email', 'Ada@Example.com', '--org', 'Acme Health', '--password-stdin', '--json'],
    'a long passphrase\n',
  );
  expect(made.code, made.stderr).toBe(0);
  const out = JSON.parse(made.stdout.trim());
  expect(Object.keys(out).sort()).toEqual(['accountId', 'orgId']);
  expect(out.accountId).toMatch(/^acc_[0-9a-f]{24}$/);
  expect(out.orgId).toMatch(/^org_/);

  // A second account of the same organization, by its id; the same email again is refused.
  const second = await cli(
    ['accounts', 'create', '--email', 'bob@example.com', '--org', out.orgId, '--password-stdin', '--json'],
    'another passphrase',
  );
  expect(second.code, second.stderr).toBe(0);
  expect(JSON.parse(second.stdout).orgId).toBe(out.orgId);
  for (const [args, stdin, why] of [
    [['--email', 'ada@example.com', '--org', out.orgId, '--password-stdin'], 'a long passphrase\n', /exists/],
    [['--email', 'c@example.com', '--org', out.orgId], 'a long passphrase\n', /--password-stdin/],
    [['--email', 'c@example.com', '--org', out.orgId, '--password-stdin'], 'short\n', /10-1024/],
  ] as const) {
    const res = await cli(['accounts', 'create', ...args, '--json'], stdin);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(why);
  }

  const s = await serve();
  try {
    const login = await fetch(`${s.baseUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: s.baseUrl },
      body: JSON.stringify({ email: 'ada@example.com', password: 'a long passphrase' }),
    });
    expect(login.status).toBe(200);
    const cookie = /vitals_console=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
    const me = await fetch(`${s.baseUrl}/api/v1/me`, { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as any).data).toMatchObject({
      accountId: out.accountId,
      email: 'ada@example.com',
      orgId: out.orgId,
      orgName: 'Acme Health',
    });
  } finally {
    await s.stop();
  }
});
