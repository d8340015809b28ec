/**
 * The session fallback (spec: delivery `auto`; CLARIFICATIONS 24): a browser holding only the
 * session token uploads the frames it buffered, and the upload becomes a `batch_frames` job that
 * supersedes the session and keeps its `userRef` and features.
 *
 * Rules (docs/batch.md):
 * - Authorization: `Bearer <sessionToken>`. The token's `sid` must be the path's id (else 404
 *   `not_found`, as for an unknown session). Accepted until the token's expiry plus the session's
 *   maximum duration plus 10 minutes: a capture may start at the end of the token's TTL, run its
 *   full duration, and need a few minutes to fail over and upload.
 * - A session already `completed`, or one whose fallback already completed, answers 409 `conflict`
 *   (the measurement exists; read it from the result endpoint).
 * - The same bytes uploaded again answer the existing job (200); other bytes make a new job (201)
 *   that also supersedes a still-live earlier fallback job, so one capture is metered once.
 */
import { insertUploadSlot } from './upload-rows.js';
import {
  FALLBACK_RESULT_PER_MIN,
  FALLBACK_UPLOAD_WINDOW_SEC,
  FALLBACK_UPLOADS_PER_WINDOW,
  FRAMES_MAX_BYTES,
  FRAMES_CONTENT_TYPE,
  decodeFramesHeader,
} from '@vitals/protocol';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { FALLBACK_GRACE_EXTRA_SEC, verifySessionToken, type SessionClaims } from '../domain/session-token.js';
import { assertCanSpend } from '../domain/jobs.js';
import { getJob, isTerminal, type JobRow } from '../store/jobs.js';
import { RateLimiter, rateHeaders } from '../auth/rate-limiter.js';
import { ObjectTooLargeError } from '../objects/object-store.js';
import { batchOf } from './batch-runtime.js';
import { insertBatchJob } from './create-job.js';
import { supersede } from './supersede.js';
import { deleteObject } from './sweeper.js';
import { newObjectKey } from '@vitals/protocol';

const uploads = new RateLimiter(FALLBACK_UPLOAD_WINDOW_SEC * 1000);
const polls = new RateLimiter(60_000);

export interface SessionAuth {
  claims: SessionClaims;
  session: JobRow;
}

export async function authorizeSession(ctx: AppContext, req: FastifyRequest, sessionId: string): Promise<SessionAuth> {
  const h = req.headers.authorization;
  const token = typeof h === 'string' && /^Bearer /i.test(h) ? h.slice(7).trim() : undefined;
  if (!token) throw new ApiError('token_invalid', 'Authorization: Bearer <sessionToken> is required');
  const pre = verifySessionToken(ctx.serverSecret, token, ctx.clock.now(), Number.MAX_SAFE_INTEGER);
  if (!pre.ok) throw new ApiError(pre.code, 'session token did not verify');
  const grace = pre.claims.dur + FALLBACK_GRACE_EXTRA_SEC;
  const check = verifySessionToken(ctx.serverSecret, token, ctx.clock.now(), grace);
  if (!check.ok)
    throw new ApiError(
      check.code,
      check.code === 'token_expired' ? 'session token is past its fallback window' : 'session token did not verify',
    );
  const session = check.claims.sid === sessionId ? await getJob(ctx.db.db, sessionId) : undefined;
  if (!session || session.mode !== 'stream' || session.key_id !== check.claims.kid)
    throw new ApiError('not_found', 'session not found');
  return { claims: check.claims, session };
}

function limit(limiter: RateLimiter, id: string, max: number, now: number): Record<string, string> {
  const d = limiter.hit(id, max, now);
  if (!d.allowed) throw new ApiError('rate_limited', 'too many requests for this session', rateHeaders(d));
  return rateHeaders(d);
}

export const limitUpload = (ctx: AppContext, id: string) =>
  limit(uploads, id, FALLBACK_UPLOADS_PER_WINDOW, ctx.clock.now());
export const limitPoll = (ctx: AppContext, id: string) => limit(polls, id, FALLBACK_RESULT_PER_MIN, ctx.clock.now());

/** Fallback jobs of a session, the current one (not superseded itself) first, then newest first. */
async function fallbackJobs(ctx: AppContext, sessionId: string): Promise<JobRow[]> {
  const ids = await ctx.db.db
    .selectFrom('cloud_jobs')
    .select('id')
    .where('supersedes', '=', sessionId)
    .where('mode', '=', 'batch_frames')
    .execute();
  const rows = (await Promise.all(ids.map((r) => getJob(ctx.db.db, r.id)))).filter((r): r is JobRow => !!r);
  return rows.sort(
    (a, b) => Number(a.superseded_by !== null) - Number(b.superseded_by !== null) || b.created_at - a.created_at,
  );
}

/** The job that now represents the session: its newest fallback job, else the session itself. */
export async function sessionResult(ctx: AppContext, session: JobRow): Promise<JobRow> {
  const [newest] = await fallbackJobs(ctx, session.id);
  return newest ?? session;
}

export async function acceptFallback(
  ctx: AppContext,
  auth: SessionAuth,
  req: FastifyRequest,
): Promise<{ job: JobRow; created: boolean }> {
  const { session } = auth;
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type !== FRAMES_CONTENT_TYPE)
    throw new ApiError('invalid_content_type', `Content-Type must be ${FRAMES_CONTENT_TYPE}`);
  if (session.status === 'completed') throw new ApiError('conflict', 'the session already completed; read its result');
  const earlier = await fallbackJobs(ctx, session.id);
  if (earlier.some((j) => j.status === 'completed'))
    throw new ApiError('conflict', 'a fallback of this session already completed; read its result');
  if (Number(req.headers['content-length']) > FRAMES_MAX_BYTES)
    throw new ApiError('object_too_large', `the frames limit is ${FRAMES_MAX_BYTES} bytes`);

  const rt = batchOf(ctx);
  const key = await ctx.keys.get(session.key_id);
  if (!key || key.status !== 'active') throw new ApiError('not_found', 'session not found');
  const objectKey = newObjectKey();
  const now = ctx.clock.now();
  await insertUploadSlot(ctx, {
    objectKey,
    key,
    kind: 'frames',
    contentType: FRAMES_CONTENT_TYPE,
    maxBytes: FRAMES_MAX_BYTES,
    urlExpiresAt: now,
    now,
  });
  let stored;
  try {
    stored = await rt.objects.put(objectKey, req.raw, { maxBytes: FRAMES_MAX_BYTES });
  } catch (err) {
    await deleteObject(ctx, rt, objectKey);
    if (err instanceof ObjectTooLargeError)
      throw new ApiError('object_too_large', `the frames limit is ${FRAMES_MAX_BYTES} bytes`);
    throw err;
  }
  await ctx.db.db
    .updateTable('uploads')
    .set({ uploaded_at: ctx.clock.now(), size: stored.size, sha256: stored.sha256 })
    .where('object_key', '=', objectKey)
    .execute();

  const head = decodeFramesHeader((await rt.objects.readBytes(objectKey))!.subarray(0, 32));
  const features = JSON.parse(session.features) as string[];
  const accepted = JSON.parse(session.accepted_features ?? session.features) as string[];
  try {
    await assertCanSpend(ctx, key, head.ok ? Math.min(3600, head.header.durationMicros / 1e6) : 0, accepted);
  } catch (err) {
    await deleteObject(ctx, rt, objectKey);
    throw err;
  }
  const result = await insertBatchJob(ctx, {
    key,
    kind: 'frames',
    objectKey,
    sha256: stored.sha256,
    idempotencyKey: `fallback:${session.id}:${stored.sha256}`,
    requested: features,
    accepted,
    userRef: session.user_ref,
    clientRef: null,
    platform: session.platform,
    webhookUrl: null,
    supersedes: session.id,
  });
  if (!result.created) {
    await deleteObject(ctx, rt, objectKey); // the same bytes again: the first upload's job answers
    return result;
  }
  await supersede(ctx, session, result.job.id);
  for (const j of earlier) if (!isTerminal(j.status)) await supersede(ctx, j, result.job.id);
  await rt.queue.enqueue(result.job.id);
  return { job: (await getJob(ctx.db.db, result.job.id))!, created: true };
}
