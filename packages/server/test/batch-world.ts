/**
 * Batch-tier test support over the one harness (`createWorld` with `batch`, src/testing.ts): phantom
 * frames files, real video cuts, presign and upload, job creation, minted streaming sessions, usage.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { generatePhantom, type PhantomOptions } from '@vitals/engine';
import {
  encodeAuxChunks,
  encodeFaceCrop,
  encodeFramesFile,
  encodeQuality,
  encodeTelemetry,
  newJobId,
  type Packet,
} from '@vitals/protocol';
import { ManualClock, systemClock, type Clock } from '../src/clock.js';
import {
  createWorld,
  openTestDatabase,
  openWholeTestDatabase,
  waitFor as waitUntil,
  type World,
  type WorldOptions,
} from '../src/testing.js';
import type { TestKey } from '../src/testing.js';
import { signSessionToken } from '../src/domain/session-token.js';
import type { DbHandle } from '../src/store/db.js';
import { getJob, newJobRow, type JobRow } from '../src/store/jobs.js';
import { ffmpegCached } from '../../../scripts/testing/ffmpeg-cached.js';

/** A batch world is a world (src/testing.ts) with batch settings. */
export type BatchWorld = World<Clock>;

/**
 * `createWorld` with `batch` set (its test defaults: no embedded worker, quick polling, a whole
 * PostgreSQL database, no face models) and a ManualClock at the current time.
 */
export const createBatchWorld = (
  opts: Pick<WorldOptions, 'batch' | 'env' | 'keyOptions' | 'clock' | 'pgQueue' | 'logger'> = {},
): Promise<BatchWorld> => createWorld<Clock>({ ...opts, batch: opts.batch ?? {} });

/**
 * A database of its own without an app (tests that run the operator's commands on it): a whole
 * PostgreSQL database with VITALS_TEST_DATABASE_URL, as a batch world has, else SQLite in a temp dir.
 */
export async function openBatchDatabase(): Promise<{
  db: DbHandle;
  dataDir: string;
  url?: string;
  cleanup(): Promise<void>;
}> {
  const url = process.env.VITALS_TEST_DATABASE_URL;
  return url ? openWholeTestDatabase(url) : openTestDatabase();
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

/** Waits until the job reaches one of `statuses` (processing is real work, so real time). */
export function waitFor(
  w: BatchWorld,
  jobId: string,
  statuses: string[] = ['completed', 'failed', 'aborted', 'expired'],
  timeoutMs = 20_000,
): Promise<JobRow> {
  return waitUntil(
    async () => {
      const row = await getJob(w.ctx.db.db, jobId);
      return row && statuses.includes(row.status) ? row : undefined;
    },
    { timeoutMs, intervalMs: 25, what: `job ${jobId} ${statuses.join('/')}` },
  );
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

const REPO = path.resolve(import.meta.dirname, '../../..');

/** A UBFC-rPPG video of ../shared/data beside the checkout (or beside a git worktree one level deeper). */
export function ubfcVideo(subject: string): string | undefined {
  return [path.resolve(REPO, '../shared/data'), path.resolve(REPO, '../../shared/data')]
    .map((d) => path.join(d, 'ubfc2', subject, 'vid.mp4'))
    .find((f) => existsSync(f));
}

/** The first `seconds` of `video` as a job uploads it (H.264, CRF 16), encoded once per machine (ffmpegCached). */
export async function videoCut(video: string, seconds: number): Promise<Buffer> {
  const args = ['-v', 'error', '-i', video, '-t', String(seconds), '-an'];
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '16', '-pix_fmt', 'yuv420p');
  return readFileSync(await ffmpegCached(args, '.mp4'));
}
