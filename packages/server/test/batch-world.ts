/**
 * Test world for the batch tier: an app with its own database and data dir, its own organization
 * and key, an injected clock, and batch settings chosen by the test (embedded worker on or off).
 * Helpers build phantom frames files, presign and upload them, and create jobs.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { generatePhantom, type PhantomOptions } from '@vitals/engine';
import {
  encodeAuxChunks,
  encodeFaceCrop,
  encodeFramesFile,
  encodeQuality,
  encodeTelemetry,
  newJobId,
  randomHex,
  type Packet,
} from '@vitals/protocol';
import { loadConfig } from '../src/config.js';
import { ManualClock, systemClock, type Clock } from '../src/clock.js';
import { createContext, closeContext } from '../src/deps.js';
import { buildServer } from '../src/server.js';
import type { BuildOptions } from '../src/app.js';
import { makeKey, openTestDatabase, type TestKey, type TestKeyOptions } from '../src/testing.js';
import type { AppContext } from '../src/context.js';
import type { BatchConfig, BatchRuntime } from '../src/batch/index.js';
import { signSessionToken } from '../src/domain/session-token.js';
import { getJob, newJobRow, type JobRow } from '../src/store/jobs.js';
import { openDatabase, type DbHandle } from '../src/store/db.js';
import { sql } from 'kysely';
import { signedInject, type SignedInjectOptions } from './helpers.js';

export interface BatchWorld {
  app: FastifyInstance;
  ctx: AppContext;
  rt: BatchRuntime;
  clock: Clock;
  key: TestKey;
  dataDir: string;
  /** The PostgreSQL URL of this world's database, when on PostgreSQL. */
  databaseUrl?: string;
  call(opts: SignedInjectOptions & { key?: TestKey }): Promise<LightMyRequestResponse>;
  newKey(opts?: TestKeyOptions): Promise<TestKey>;
  close(): Promise<void>;
}

/**
 * A database of its own: SQLite in a temp dir, or a fresh PostgreSQL database (a whole database,
 * not a schema: the migrator's table checks look across schemas, and pg-boss brings its own).
 */
export async function openBatchDatabase(): Promise<{
  db: DbHandle;
  dataDir: string;
  url?: string;
  cleanup(): Promise<void>;
}> {
  const url = process.env.VITALS_TEST_DATABASE_URL;
  if (!url) return openTestDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-batch-'));
  const name = `vb_${randomHex(6)}`;
  const admin = openDatabase({ databaseUrl: url, poolSize: 1 });
  await sql`create database ${sql.id(name)}`.execute(admin.db);
  await admin.close();
  const u = new URL(url);
  u.pathname = `/${name}`;
  const scoped = u.toString();
  const db = openDatabase({ databaseUrl: scoped, poolSize: 8 });
  return {
    db,
    dataDir,
    url: scoped,
    async cleanup() {
      await db.close();
      const a = openDatabase({ databaseUrl: url, poolSize: 1 });
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(a.db);
      await a.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function createBatchWorld(
  opts: {
    batch?: Partial<BatchConfig>;
    env?: Record<string, string>;
    keyOptions?: TestKeyOptions;
    clock?: Clock;
    /** On PostgreSQL, configure VITALS_DATABASE_URL too, so the queue is pg-boss (scale-out mode). */
    pgQueue?: boolean;
    /** Pino options for the app's log (none by default). */
    logger?: BuildOptions['logger'];
  } = {},
): Promise<BatchWorld> {
  const store = await openBatchDatabase();
  const config = loadConfig({
    ...opts.env,
    VITALS_DATA_DIR: store.dataDir,
    ...(opts.pgQueue && store.url ? { VITALS_DATABASE_URL: store.url } : {}),
  });
  const clock = opts.clock ?? new ManualClock(Date.now());
  const ctx = await createContext(config, {
    clock,
    db: store.db,
    env: {},
    batch: { pollMs: 50, sweepMs: 3_600_000, webhookRetryBaseMs: 0, embeddedWorker: false, ...opts.batch },
  });
  // Tests do not load the face models: emotion and gaze are "not available" unless a test says so.
  ctx.batch!.auxCapabilities = async () => ({ emotion: false, gaze: false });
  const { app } = await buildServer(ctx, { logger: opts.logger });
  const key = await makeKey(ctx, opts.keyOptions);
  return {
    app,
    ctx,
    rt: ctx.batch!,
    clock,
    key,
    dataDir: store.dataDir,
    databaseUrl: 'url' in store ? store.url : undefined,
    call: ({ key: k, ...o }) =>
      signedInject(app, k ?? key, { ...o, timestamp: o.timestamp ?? Math.floor(clock.now() / 1000) }),
    newKey: (o) => makeKey(ctx, o),
    async close() {
      await app.close();
      await closeContext(ctx).catch(() => undefined);
      await store.cleanup().catch(() => undefined);
    },
  };
}

export { ManualClock, systemClock };

export const json = (res: LightMyRequestResponse): any => JSON.parse(res.body);
export const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

export function encodePacket(p: Packet): Uint8Array[] {
  switch (p.type) {
    case 1:
      return [encodeFaceCrop(p)];
    case 2:
      return [encodeQuality(p)];
    case 3:
      return [encodeTelemetry(p)];
    case 4:
      return encodeAuxChunks({ tMicros: p.tMicros, jpeg: p.payload });
  }
}

const cache = new Map<string, Uint8Array>();
/** A frames file of a phantom face (known heart rate), cached per options. */
export function phantomFramesFile(o: PhantomOptions = {}): Uint8Array {
  const k = JSON.stringify(o);
  let f = cache.get(k);
  if (!f) {
    const opts = { durationSec: 30, fps: 30, seed: 7, ...o };
    const { packets } = generatePhantom(opts);
    f = encodeFramesFile(packets.flatMap(encodePacket), opts.durationSec * 1e6);
    cache.set(k, f);
  }
  return f;
}

/** The path and query of an absolute upload URL (for inject). */
export const pathOf = (url: string): string => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

export async function presign(
  w: BatchWorld,
  body: Record<string, unknown> = { kind: 'frames' },
  key?: TestKey,
): Promise<any> {
  const res = await w.call({ method: 'POST', url: '/sdk/v1/cloud/uploads/presign', body, key });
  if (res.statusCode !== 200) throw new Error(`presign ${res.statusCode} ${res.body}`);
  return json(res).data;
}

export function put(
  w: BatchWorld,
  uploadUrl: string,
  bytes: Uint8Array,
  contentType = 'application/octet-stream',
): Promise<LightMyRequestResponse> {
  return w.app.inject({
    method: 'PUT',
    url: pathOf(uploadUrl),
    headers: { 'content-type': contentType },
    payload: Buffer.from(bytes),
  });
}

/** Presign + PUT; returns the object key and the bytes' hash. */
export async function upload(
  w: BatchWorld,
  bytes: Uint8Array,
  kind = 'frames',
  key?: TestKey,
): Promise<{ objectKey: string; sha256: string }> {
  const up = await presign(w, { kind }, key);
  const res = await put(w, up.uploadUrl, bytes, up.contentType);
  if (res.statusCode !== 200) throw new Error(`PUT ${res.statusCode} ${res.body}`);
  return { objectKey: up.objectKey, sha256: sha256(bytes) };
}

let idem = 0;
export const idemKey = (): string => `idem-${process.pid}-${Date.now()}-${++idem}`;

export function jobBody(objectKey: string, hash: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return { objectKey, kind: 'frames', sha256: hash, idempotencyKey: idemKey(), consent: true, ...over };
}

export async function createJob(
  w: BatchWorld,
  bytes: Uint8Array,
  over: Record<string, unknown> = {},
  key?: TestKey,
): Promise<any> {
  const { objectKey, sha256: h } = await upload(w, bytes, (over.kind as string) ?? 'frames', key);
  const res = await w.call({
    method: 'POST',
    url: '/sdk/v1/cloud/jobs',
    body: jobBody(objectKey, h, over),
    key,
  });
  if (res.statusCode !== 201) throw new Error(`job ${res.statusCode} ${res.body}`);
  return json(res).data;
}

/** Polls the store until the job reaches one of `statuses` (real time; processing is real work). */
export async function waitFor(
  w: BatchWorld,
  jobId: string,
  statuses: string[] = ['completed', 'failed', 'aborted', 'expired'],
  timeoutMs = 20_000,
): Promise<JobRow> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const row = await getJob(w.ctx.db.db, jobId);
    if (row && statuses.includes(row.status)) return row;
    if (Date.now() > until) throw new Error(`job ${jobId} still ${row?.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A streaming session row and its token, as the streaming tier mints them. */
export async function mintSession(
  w: BatchWorld,
  over: {
    status?: string;
    userRef?: string;
    features?: string[];
    durationSec?: number;
    key?: TestKey;
    ttlSec?: number;
  } = {},
): Promise<{ sessionId: string; token: string }> {
  const key = over.key ?? w.key;
  const now = w.clock.now();
  const sessionId = newJobId();
  const features = over.features ?? ['hrv'];
  const dur = over.durationSec ?? 60;
  await w.ctx.db.db
    .insertInto('cloud_jobs')
    .values(
      newJobRow({
        id: sessionId,
        key_id: key.keyId,
        org_id: key.orgId,
        mode: 'stream',
        status: over.status ?? 'pending',
        created_at: now,
        user_ref: over.userRef ?? null,
        platform: 'web',
        features: JSON.stringify(features),
        accepted_features: JSON.stringify(features),
        duration_sec: dur,
      }),
    )
    .execute();
  const iat = Math.floor(now / 1000);
  const token = signSessionToken(w.ctx.serverSecret, {
    sid: sessionId,
    kid: key.keyId,
    dur,
    feat: features,
    iat,
    exp: iat + (over.ttlSec ?? 300),
  });
  return { sessionId, token };
}

export async function usageOf(w: BatchWorld, keyId: string): Promise<{ seconds: number; tokens: number }> {
  const rows = await w.ctx.db.db.selectFrom('usage_month').selectAll().where('key_id', '=', keyId).execute();
  return rows.reduce(
    (a, r) => ({ seconds: a.seconds + Number(r.cloud_seconds), tokens: a.tokens + Number(r.tokens_micro) }),
    { seconds: 0, tokens: 0 },
  );
}
