/**
 * `vitals-server serve --processes 2` (issue 18, target 4): two server processes on one port, the
 * real executable on the source (tsx), on SQLite or, with VITALS_TEST_DATABASE_URL, PostgreSQL.
 * Beside it a plain one-process `serve` on the same store, so that one test can put the same
 * session token on two processes for certain. Both processes of the cluster answer (the primary
 * hands connections out in turn); the first-start key is printed once; one connection per token
 * holds across processes; SIGTERM to the primary ends every process gracefully.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signRequest } from '@vitals/protocol';
import { waitFor } from '../src/testing.js';
import { openBatchDatabase } from './batch-world.js';
import { TestClient } from './stream-helpers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = path.join(ROOT, 'packages/server/src/bin.ts');
const NODE_ARGS = ['--conditions=source', '--import', 'tsx', BIN];

interface Served {
  child: ChildProcess;
  baseUrl: string;
  output: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

let store: Awaited<ReturnType<typeof openBatchDatabase>>;
let cluster: Served;
let single: Served;
let key: { keyId: string; secret: string };

function spawnServe(args: string[]): Promise<Served> {
  const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'silent', VITALS_DEMO: '0' };
  delete env.VITALS_PROCESSES;
  if (store.url) env.VITALS_DATABASE_URL = store.url;
  else delete env.VITALS_DATABASE_URL;
  const child = spawn(process.execPath, [...NODE_ARGS, 'serve', '--port', '0', '--data-dir', store.dataDir, ...args], {
    cwd: ROOT,
    env: env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 90_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolve({
        child,
        baseUrl: m[1],
        output: () => out,
        stop: () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    void exited.then((code) => reject(new Error(`serve exited ${code}:\n${out}`)));
  });
}

async function call(baseUrl: string, method: string, p: string, body?: unknown): Promise<any> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers = {
    ...(await signRequest({ keyId: key.keyId, secret: key.secret, method, path: p, body: text })),
    ...(text === undefined ? {} : { 'content-type': 'application/json' }),
  };
  const res = await fetch(baseUrl + p, { method, headers, body: text });
  return { status: res.status, json: await res.json() };
}

async function mint(): Promise<{ sessionId: string; sessionToken: string }> {
  const r = await call(cluster.baseUrl, 'POST', '/sdk/v1/cloud/sessions', {
    platform: 'web',
    durationSec: 30,
    consent: true,
  });
  expect(r.status).toBe(201);
  return r.json.data;
}

const wsOf = (s: Served) => `${s.baseUrl.replace('http', 'ws')}/sdk/v1/cloud/stream`;

beforeAll(async () => {
  store = await openBatchDatabase();
  // The cluster first: on an empty store it prints the first-start key (PostgreSQL's test database may hold keys).
  cluster = await spawnServe(['--processes', '2']);
  single = await spawnServe([]);
  const id = /VITALS_KEY_ID=(\S+)/.exec(cluster.output());
  const secret = /VITALS_KEY_SECRET=(\S+)/.exec(cluster.output());
  if (id && secret) key = { keyId: id[1], secret: secret[1] };
  else {
    const { keysCreate } = await import('../src/cli/admin.js');
    const { loadConfig } = await import('../src/config.js');
    key = (await keysCreate(
      loadConfig({ VITALS_DATA_DIR: store.dataDir, ...(store.url ? { VITALS_DATABASE_URL: store.url } : {}) }),
      {},
    )) as { keyId: string; secret: string };
  }
}, 180_000);

afterAll(async () => {
  if (cluster?.child.exitCode === null) await cluster.stop();
  if (single?.child.exitCode === null) await single.stop();
  await store?.cleanup();
}, 60_000);

describe(`serve --processes 2 (${process.env.VITALS_TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  test('one listening line, the first-start key at most once, and both processes answer on the port', async () => {
    const out = cluster.output();
    expect(out.match(/listening on/g)).toHaveLength(1);
    expect(out).toContain('(2 processes)');
    expect((out.match(/First start/g) ?? []).length).toBeLessThanOrEqual(1);
    if (!store.url) expect(out.match(/VITALS_KEY_SECRET=/g)).toHaveLength(1);
    // Each request on a new connection; the primary hands them out in turn. Only the first
    // process runs the embedded batch worker, so /health tells the two apart.
    const embedded = new Set<boolean>();
    for (let i = 0; i < 8 && embedded.size < 2; i++) {
      const res = await fetch(`${cluster.baseUrl}/health`, { headers: { connection: 'close' } });
      embedded.add((await res.json()).workers.embedded);
    }
    expect([...embedded].sort()).toEqual([false, true]);
  });

  test('the same token on two processes: the second connection is refused session_already_used', async () => {
    const s = await mint();
    const { c } = await TestClient.ready(wsOf(cluster), s.sessionToken);
    const other = await TestClient.connect(wsOf(single));
    other.json({ t: 'hello', protocol: 1, token: s.sessionToken });
    const { error, close } = await other.fatal();
    expect(error).toMatchObject({ code: 'session_already_used', fatal: true });
    expect(close.code).toBe(1008);
    c.json({ t: 'abort' });
    await c.closed;

    // And the other way round: ready on the single process, refused by the cluster's processes.
    const s2 = await mint();
    const first = await TestClient.ready(wsOf(single), s2.sessionToken);
    for (let i = 0; i < 2; i++) {
      const again = await TestClient.connect(wsOf(cluster)); // the two connections go to both processes
      again.json({ t: 'hello', protocol: 1, token: s2.sessionToken });
      expect((await again.fatal()).error.code).toBe('session_already_used');
    }
    first.c.json({ t: 'abort' });
    await first.c.closed;
  });

  test('simultaneous hellos with one token on the cluster: exactly one ready', async () => {
    for (let round = 0; round < 3; round++) {
      const s = await mint();
      const clients = await Promise.all([0, 1, 2, 3].map(() => TestClient.connect(wsOf(cluster))));
      for (const c of clients) c.json({ t: 'hello', protocol: 1, token: s.sessionToken });
      const answered = (c: TestClient) => c.events.some((e) => e.t === 'ready' || e.t === 'error');
      await waitFor(() => clients.every(answered), { what: 'an answer to every hello', timeoutMs: 20_000 });
      expect(clients.filter((c) => c.events.some((e) => e.t === 'ready'))).toHaveLength(1);
      expect(clients.filter((c) => c.events.some((e) => e.code === 'session_already_used'))).toHaveLength(3);
      for (const c of clients) c.close();
    }
  });

  test('SIGTERM to the primary: running sessions end as on shutdown, every process exits, exit code 0', async () => {
    const s = await mint();
    const { c } = await TestClient.ready(wsOf(cluster), s.sessionToken);
    const code = await cluster.stop();
    expect(code).toBe(0);
    const { error, close } = await c.fatal();
    expect(error).toMatchObject({ code: 'internal_error', fatal: true });
    expect(close.code).toBe(1001);
    // The session was settled by the process that held it before it exited (seen from the other server).
    const job = await call(single.baseUrl, 'GET', `/sdk/v1/cloud/jobs/${s.sessionId}`);
    expect(job.json.data).toMatchObject({ status: 'aborted' });
    // Nothing listens on the cluster's port any more.
    await expect(fetch(`${cluster.baseUrl}/health`)).rejects.toThrow();
  });
});
