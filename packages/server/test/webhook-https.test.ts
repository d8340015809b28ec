/**
 * Real deliveries (issue 6): a `vitals-server serve` child process started with NODE_EXTRA_CA_CERTS
 * naming a self-signed certificate generated here (Node reads that variable only at start, which is
 * why the delivering server is a child process: production code has no test hook for trust), and a
 * real HTTPS receiver on loopback, reachable only because VITALS_WEBHOOK_ALLOW_HOSTS names it.
 * Proves: per-job webhook signed NCS1 with the job's key over the receiver's path; organization
 * envelope and headers signed with the endpoint secret; a 3xx is a failure (not followed), journaled
 * three times; `webhooks create|rotate|test|journal|redeliver` through the command line.
 * Runs on SQLite (the delivering child owns its data dir).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { canonicalString, sha256Hex, signRequest, verifySignature } from '@vitals/protocol';
import { phantomFramesFile, sha256 } from './batch-world.js';
import { createContext, closeContext } from '../src/deps.js';
import { loadConfig } from '../src/config.js';
import { createKey, createOrg } from '../src/store/orgs-keys.js';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-hooks-'));
const dataDir = path.join(dir, 'data');
const certFile = path.join(dir, 'cert.pem');
const env = (): NodeJS.ProcessEnv => ({
  ...process.env,
  VITALS_DATA_DIR: dataDir,
  VITALS_DATABASE_URL: '',
  NODE_EXTRA_CA_CERTS: certFile,
  VITALS_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  VITALS_WEBHOOK_RETRY_BASE_MS: '100',
  VITALS_WORKER_POLL_MS: '100',
});
const cli = async (...args: string[]): Promise<any> => {
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', 'packages/server/src/bin.ts', ...args, '--json'],
    { cwd: root, env: env() },
  );
  return JSON.parse(stdout.trim().split('\n').pop()!);
};

interface Hit {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}
const hits: Hit[] = [];
let receiver: https.Server;
let hookBase = '';
let server: ChildProcess | undefined;
let baseUrl = '';

beforeAll(async () => {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  receiver = https.createServer(
    { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(certFile) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        hits.push({ path: req.url ?? '', headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) });
        if (req.url?.startsWith('/redirect')) res.writeHead(302, { location: `${hookBase}/followed` }).end();
        else res.writeHead(204).end();
      });
    },
  );
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookBase = `https://127.0.0.1:${(receiver.address() as { port: number }).port}`;
}, 60_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server!.once('exit', r));
  }
  receiver?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function startServer(): Promise<void> {
  server = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=source',
      'packages/server/src/bin.ts',
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
    ],
    { cwd: root, env: env(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  baseUrl = await new Promise<string>((resolve, reject) => {
    let out = '';
    server!.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    server!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

async function signedFetch(
  key: { keyId: string; secret: string },
  method: string,
  p: string,
  body?: object,
): Promise<any> {
  const bytes = body === undefined ? undefined : JSON.stringify(body);
  const headers = await signRequest({ keyId: key.keyId, secret: key.secret, method, path: p, body: bytes });
  const res = await fetch(`${baseUrl}${p}`, {
    method,
    headers: { ...headers, ...(bytes ? { 'content-type': 'application/json' } : {}) },
    body: bytes,
  });
  return { status: res.status, body: await res.json() };
}

const waitFor = async <T>(fn: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
};

test('per-job and organization deliveries over HTTPS, the redirect refusal, rotate, test, redeliver', async () => {
  // The organization and key straight into the data dir's store (the CLI for them is tested elsewhere).
  const ctx = await createContext(loadConfig({ VITALS_DATA_DIR: dataDir }), {
    env: {},
    batch: { embeddedWorker: false },
  });
  const org = await createOrg(ctx.db.db, 'hooks', 10, Date.now());
  const k = await createKey(ctx.db.db, { orgId: org.id }, Date.now());
  await closeContext(ctx);
  const orgId = org.id;
  const key = { keyId: k.key.id, secret: k.secret };
  const [ep, redirecting] = await Promise.all([
    cli('webhooks', 'create', '--org', orgId, '--url', `${hookBase}/org`, '--data-dir', dataDir),
    cli('webhooks', 'create', '--org', orgId, '--url', `${hookBase}/redirect`, '--data-dir', dataDir),
    startServer(),
  ]);
  expect(ep.id).toMatch(/^whe_/);
  expect(ep.secret).toMatch(/^whsec_[0-9a-f]{48}$/);

  const bytes = phantomFramesFile({ durationSec: 20 });
  const up = (await signedFetch(key, 'POST', '/sdk/v1/cloud/uploads/presign', { kind: 'frames' })).body.data;
  const put = await fetch(up.uploadUrl, {
    method: 'PUT',
    headers: { 'content-type': up.contentType },
    body: bytes as unknown as BodyInit,
  });
  expect(put.status).toBe(200);
  const created = await signedFetch(key, 'POST', '/sdk/v1/cloud/jobs', {
    objectKey: up.objectKey,
    kind: 'frames',
    sha256: sha256(bytes),
    idempotencyKey: `https-test-${Date.now()}`,
    consent: true,
    webhookUrl: `${hookBase}/job?ref=42`,
  });
  expect(created.status).toBe(201);
  const jobId = created.body.data.jobId;

  // Per-job webhook: {ok, data: job}, NCS1 with the job's key over the receiver's path (no query).
  const jobHit = await waitFor(() => hits.find((h) => h.path.startsWith('/job')));
  expect(jobHit.path).toBe('/job?ref=42');
  expect(jobHit.headers['x-key-id']).toBe(key.keyId);
  expect(
    await verifySignature({
      secretSha256Hex: await sha256Hex(key.secret),
      method: 'POST',
      path: '/job',
      timestamp: jobHit.headers['x-timestamp'],
      nonce: jobHit.headers['x-nonce'],
      body: new Uint8Array(jobHit.body),
      signature: jobHit.headers['x-signature'],
    }),
  ).toBe(true);
  const jobBody = JSON.parse(jobHit.body.toString());
  expect(jobBody.ok).toBe(true);
  expect(jobBody.data).toMatchObject({ jobId, status: 'completed', measurement: { origin: 'cloud', attested: true } });

  // Organization endpoint: the envelope, its headers, signed with the hex SHA-256 of whsec_.
  const orgHit = await waitFor(() => hits.find((h) => h.path === '/org'));
  const env1 = JSON.parse(orgHit.body.toString());
  expect(Object.keys(env1).sort()).toEqual(['createdAt', 'data', 'event', 'id']);
  expect(env1.id).toMatch(/^whd_[0-9a-f]{24}$/);
  expect(env1.event).toBe('cloud.job.completed');
  expect(env1.data.jobId).toBe(jobId);
  expect(env1.data.measurement.id).toBe(env1.data.measurementId);
  expect(orgHit.headers['x-webhook-id']).toBe(ep.id);
  expect(orgHit.headers['x-nonce'].length).toBeGreaterThanOrEqual(8);
  const canonical = await canonicalString({
    method: 'POST',
    path: '/org',
    timestamp: orgHit.headers['x-timestamp'],
    nonce: orgHit.headers['x-nonce'],
    body: new Uint8Array(orgHit.body),
  });
  const { hmacBase64 } = await import('@vitals/protocol');
  expect(await hmacBase64(await sha256Hex(ep.secret), canonical)).toBe(orgHit.headers['x-signature']);

  // A 3xx is a failed delivery, never followed: three attempts, journaled, then failed.
  await waitFor(() => (hits.filter((h) => h.path === '/redirect').length >= 3 ? true : undefined));
  // (Command-line calls run side by side where independent: each is a cold process.)
  const [journal, rotated] = await Promise.all([
    cli('webhooks', 'journal', '--org', orgId, '--data-dir', dataDir),
    cli('webhooks', 'rotate', ep.id, '--data-dir', dataDir),
  ]);
  const failed = journal.deliveries.find((d: any) => d.endpointId === redirecting.id);
  expect(failed).toMatchObject({
    status: 'failed',
    attempts: 3,
    lastStatusCode: 302,
    lastError: 'redirect not followed',
    event: 'cloud.job.completed',
  });
  expect(hits.filter((h) => h.path === '/redirect')).toHaveLength(3);
  expect(hits.filter((h) => h.path === '/followed')).toHaveLength(0);

  // Rotate: the next delivery verifies with the new secret only. Redeliver: a new delivery id, the
  // body rebuilt from the job as it is now.
  expect(rotated.id).toBe(ep.id);
  expect(rotated.secret).not.toBe(ep.secret);
  const [detail, tested, again] = await Promise.all([
    cli('webhooks', 'journal', failed.id, '--data-dir', dataDir),
    cli('webhooks', 'test', ep.id, '--data-dir', dataDir),
    cli('webhooks', 'redeliver', env1.id, '--data-dir', dataDir),
  ]);
  expect(detail.attemptLog.map((a: any) => [a.attempt, a.status_code, a.ok])).toEqual([
    [1, 302, false],
    [2, 302, false],
    [3, 302, false],
  ]);
  expect(
    detail.attemptLog.every((a: any) => typeof a.response_ms === 'number' && a.remote_address === '127.0.0.1'),
  ).toBe(true);
  expect(tested).toMatchObject({ event: 'webhook.test', status: 'succeeded', attempts: 1, lastStatusCode: 204 });
  const testHit = hits
    .filter((h) => h.path === '/org')
    .find((h) => JSON.parse(h.body.toString()).event === 'webhook.test')!;
  const c2 = await canonicalString({
    method: 'POST',
    path: '/org',
    timestamp: testHit.headers['x-timestamp'],
    nonce: testHit.headers['x-nonce'],
    body: new Uint8Array(testHit.body),
  });
  expect(await hmacBase64(await sha256Hex(rotated.secret), c2)).toBe(testHit.headers['x-signature']);
  expect(await hmacBase64(await sha256Hex(ep.secret), c2)).not.toBe(testHit.headers['x-signature']);

  expect(again).toMatchObject({ status: 'succeeded', redeliveryOf: env1.id });
  expect(again.id).not.toBe(env1.id);
  const reHit = hits
    .filter((h) => h.path === '/org')
    .map((h) => JSON.parse(h.body.toString()))
    .find((b) => b.id === again.id);
  expect(reHit).toMatchObject({ event: 'cloud.job.completed', data: { jobId, status: 'completed' } });
}, 120_000);
