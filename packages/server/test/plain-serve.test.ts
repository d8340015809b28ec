/**
 * The same processes whatever the store (issue 14, items 2 and 3): a key made by a plain
 * `keys create` (no --org: an unmetered organization) completes a cloud session and a frames job on
 * a plain `serve`, which runs the workers itself: on SQLite, and on PostgreSQL (pg-boss queue) with
 * VITALS_TEST_DATABASE_URL. The commands run in-process (the functions bin.ts calls) on the
 * configuration an operator's environment gives; everything else is real: HTTP on loopback, the
 * WebSocket, the upload, the worker.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generatePhantom } from '@vitals/engine';
import { encodeFaceCrop, signRequest } from '@vitals/protocol';
import { loadConfig } from '../src/config.js';
import { keysCreate } from '../src/cli/admin.js';
import { serve } from '../src/cli/serve.js';
import { openBatchDatabase, phantomFramesFile, sha256, idemKey } from './batch-world.js';
import { TestClient, sendWithinRate } from './stream-helpers.js';

interface Key {
  keyId: string;
  secret: string;
  orgId: string;
}

let store: Awaited<ReturnType<typeof openBatchDatabase>>;
let key: Key;
let baseUrl: string;
let stop: () => Promise<void>;
const log: string[] = [];

beforeAll(async () => {
  store = await openBatchDatabase();
  // What an operator sets: the data dir, and VITALS_DATABASE_URL for PostgreSQL. Nothing else.
  const env = { VITALS_DATA_DIR: store.dataDir, ...(store.url ? { VITALS_DATABASE_URL: store.url } : {}) };
  key = (await keysCreate(loadConfig(env), {})) as Key;
  // `vitals-server serve --host 127.0.0.1 --port 0`
  stop = await serve(loadConfig(env, { host: '127.0.0.1', port: 0 }), (l) => log.push(l));
  baseUrl = /listening on (http:\/\/\S+)/.exec(log.join('\n'))![1];
}, 60_000);
afterAll(async () => {
  await stop?.();
  await store?.cleanup();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = {
    ...(await signRequest({ keyId: key.keyId, secret: key.secret, method, path, body: text })),
    ...(text === undefined ? {} : { 'content-type': 'application/json' }),
  };
  const res = await fetch(baseUrl + path, { method, headers, body: text });
  return { status: res.status, json: await res.json() };
}

async function settled(jobId: string, timeoutMs: number): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { json } = await call('GET', `/sdk/v1/cloud/jobs/${jobId}`);
    if (['completed', 'failed', 'aborted', 'expired'].includes(json.data?.status)) return json.data;
    if (Date.now() > until) throw new Error(`job ${jobId} still ${json.data?.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe(`a plain keys create key on a plain serve (${process.env.VITALS_TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  test('its organization is unmetered', async () => {
    const { status, json } = await call('POST', '/sdk/v1/auth/test');
    expect(status).toBe(200);
    expect(json.data).toMatchObject({ metering: 'unmetered', tokenBalanceUsd: null });
  });

  test('a frames job completes: serve ran a worker', { timeout: 60_000 }, async () => {
    const bytes = phantomFramesFile({ durationSec: 20, heartRateBpm: 72 });
    const up = await call('POST', '/sdk/v1/cloud/uploads/presign', { kind: 'frames' });
    expect(up.status).toBe(200);
    const put = await fetch(up.json.data.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': up.json.data.contentType },
      body: Buffer.from(bytes),
    });
    expect(put.status).toBe(200);
    const created = await call('POST', '/sdk/v1/cloud/jobs', {
      objectKey: up.json.data.objectKey,
      kind: 'frames',
      sha256: sha256(bytes),
      idempotencyKey: idemKey(),
      consent: true,
    });
    expect(created.status).toBe(201);
    const job = await settled(created.json.data.jobId, 45_000);
    expect(job).toMatchObject({ status: 'completed', measurement: { origin: 'cloud' } });
    expect(Math.abs(job.measurement.cardiac.heartRate.value - 72)).toBeLessThanOrEqual(3);
    const health = await (await fetch(`${baseUrl}/health`)).json();
    expect(health).toMatchObject({ ok: true, workers: { embedded: true, stalled: false } });
  });

  test('a cloud session completes', { timeout: 60_000 }, async () => {
    const before = (await call('POST', '/sdk/v1/auth/test')).json.data.quotas;
    const s = await call('POST', '/sdk/v1/cloud/sessions', { platform: 'web', durationSec: 30, consent: true });
    expect(s.status).toBe(201);
    const { packets } = generatePhantom({ heartRateBpm: 70, durationSec: 6, fps: 30, seed: 3 });
    const { c } = await TestClient.ready(s.json.data.wsUrl, s.json.data.sessionToken);
    await sendWithinRate(
      c,
      packets.filter((p) => p.type === 1).map((p) => encodeFaceCrop(p as never)),
    );
    c.json({ t: 'stop' });
    const final = await c.next('final', 20_000);
    expect(final.measurement).toMatchObject({ origin: 'cloud', attested: true, keyId: key.keyId });
    const job = await settled(s.json.data.sessionId, 5000);
    expect(job).toMatchObject({ status: 'completed', measurementId: final.measurementId });
    // Usage is recorded for the unmetered organization all the same.
    const after = (await call('POST', '/sdk/v1/auth/test')).json.data.quotas;
    expect(after.cloudSecondsUsed - before.cloudSecondsUsed).toBeCloseTo(job.secondsProcessed, 2);
    expect(after.tokensUsedUsd).toBeGreaterThan(before.tokensUsedUsd);
  });
});
