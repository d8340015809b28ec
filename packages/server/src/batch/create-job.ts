/**
 * Job creation (spec: POST /sdk/v1/cloud/jobs), in the order a request is judged:
 * 1. the schema (required fields, `invalid_kind`, `consent_required`, idempotencyKey 16-200);
 * 2. `webhookUrl`: https and not a literal private or loopback host (CLARIFICATIONS 23);
 * 3. idempotency: the same (key, idempotencyKey) with the same sha256 returns the existing job as
 *    it is now (200, CLARIFICATIONS 19), with another sha256 409 `idempotency_conflict` — judged
 *    before the object, which is deleted once its job finishes;
 * 4. the object: presigned by this key, uploaded, not swept (else 404 `object_not_found`), of the
 *    declared kind (else `invalid_kind`), within the kind's size (413), hash equal to the stored
 *    bytes' (422 `sha256_mismatch`);
 * 5. `supersedes` names a job or session of this key (else 404 `not_found`);
 * 6. features, then the spending checks (quota, token cap, balance);
 * 7. insert and bind the object in one transaction. A concurrent duplicate loses on the unique
 *    index and answers the winner's job.
 */
import {
  FEATURES,
  FRAMES_HEADER_BYTES,
  decodeFramesHeader,
  newJobId,
  VIDEO_MIN_DURATION_SEC,
  type JobCreate,
} from '@vitals/protocol';
import type { AppContext } from '../context.js';
import type { KeyRecord } from '../store/orgs-keys.js';
import { ApiError } from '../errors.js';
import { assertCanSpend } from '../domain/jobs.js';
import { findByIdempotencyKey, getJob, getJobForKey, newJobRow, type JobRow } from '../store/jobs.js';
import { checkWebhookUrl, parseAllowList } from '../webhooks/ssrf.js';
import { batchOf } from './batch-runtime.js';
import { supersede } from './supersede.js';

export interface Created {
  job: JobRow;
  created: boolean;
}

export async function createJob(ctx: AppContext, key: KeyRecord, body: JobCreate): Promise<Created> {
  const db = ctx.db.db;
  let webhookUrl: string | null = null;
  if (body.webhookUrl !== undefined) {
    const w = checkWebhookUrl(body.webhookUrl, parseAllowList(ctx.config.webhookAllowHosts));
    if (!w.ok) throw new ApiError('validation_error', w.reason);
    webhookUrl = w.url.href;
  }
  const existing = await findByIdempotencyKey(db, key.id, body.idempotencyKey);
  if (existing) return { job: sameOrConflict(existing, body.sha256), created: false };

  const rt = batchOf(ctx);
  const upload = await db
    .selectFrom('uploads')
    .selectAll()
    .where('object_key', '=', body.objectKey)
    .where('key_id', '=', key.id)
    .executeTakeFirst();
  const stored =
    upload && upload.deleted_at === null && upload.uploaded_at !== null
      ? await rt.objects.stat(body.objectKey)
      : undefined;
  if (!upload || !stored)
    throw new ApiError('object_not_found', 'no uploaded object with that objectKey (never uploaded, or swept)');
  if (upload.kind !== body.kind) throw new ApiError('invalid_kind', `the object was presigned for kind ${upload.kind}`);
  if (stored.size > Number(upload.max_bytes))
    throw new ApiError('object_too_large', `the ${upload.kind} limit is ${upload.max_bytes} bytes`);
  if (stored.sha256 !== body.sha256) throw new ApiError('sha256_mismatch', 'sha256 does not match the uploaded bytes');
  if (upload.job_id && upload.job_id !== '') {
    // A concurrent duplicate (same idempotency key) may have bound the object after our first
    // look for it: then this is the idempotent repeat, not a conflict.
    const winner = await findByIdempotencyKey(db, key.id, body.idempotencyKey);
    if (winner) return { job: sameOrConflict(winner, body.sha256), created: false };
    throw new ApiError('conflict', 'the object already belongs to another job');
  }

  let superseded: JobRow | undefined;
  if (body.supersedes !== undefined) {
    superseded = await getJobForKey(db, key.id, body.supersedes);
    if (!superseded) throw new ApiError('not_found', 'supersedes names no job or session of this key');
  }

  const { requested, accepted } = await resolveFeatures(ctx, key, body.features);
  await assertCanSpend(ctx, key, await estimateSeconds(ctx, body), accepted);

  const result = await insertBatchJob(ctx, {
    key,
    kind: body.kind as 'frames' | 'video',
    objectKey: body.objectKey,
    sha256: body.sha256,
    idempotencyKey: body.idempotencyKey,
    requested,
    accepted,
    userRef: body.userRef ?? null,
    clientRef: body.clientRef ?? null,
    platform: body.platform ?? null,
    webhookUrl,
    supersedes: superseded?.id ?? null,
  });
  if (!result.created) return { job: sameOrConflict(result.job, body.sha256), created: false };
  const id = result.job.id;

  if (superseded) await supersede(ctx, superseded, id);
  // The creation answer is the job as created (spec: 201 with status `queued`), read before the
  // queue can hand it to a worker that would already have moved it to `running`.
  const created = (await getJob(db, id))!;
  await rt.queue.enqueue(id);
  return { job: created, created: true };
}

export interface NewJob {
  key: KeyRecord;
  kind: 'frames' | 'video';
  objectKey: string;
  sha256: string;
  idempotencyKey: string;
  requested: string[];
  accepted: string[];
  userRef: string | null;
  clientRef: string | null;
  platform: string | null;
  webhookUrl: string | null;
  supersedes: string | null;
}

/**
 * Inserts a queued batch job and binds its object, in one transaction. When another request with
 * the same (key, idempotencyKey) got there first, answers that job with `created: false`.
 */
export async function insertBatchJob(ctx: AppContext, j: NewJob): Promise<Created> {
  const db = ctx.db.db;
  const now = ctx.clock.now();
  const id = newJobId();
  const outcome = await db
    .transaction()
    .execute(async (trx) => {
      await trx
        .insertInto('cloud_jobs')
        .values(
          newJobRow({
            id,
            key_id: j.key.id,
            org_id: j.key.orgId,
            mode: j.kind === 'video' ? 'batch_video' : 'batch_frames',
            status: 'queued',
            created_at: now,
            user_ref: j.userRef,
            client_ref: j.clientRef,
            platform: j.platform,
            features: JSON.stringify(j.requested),
            accepted_features: JSON.stringify(j.accepted),
            object_key: j.objectKey,
            sha256: j.sha256,
            idempotency_key: j.idempotencyKey,
            webhook_url: j.webhookUrl,
            supersedes: j.supersedes,
          }),
        )
        .execute();
      const bound = await trx
        .updateTable('uploads')
        .set({ job_id: id })
        .where('object_key', '=', j.objectKey)
        .where('job_id', 'is', null)
        .executeTakeFirst();
      if (Number(bound.numUpdatedRows) === 0)
        throw new ApiError('conflict', 'the object already belongs to another job');
      return undefined;
    })
    .catch(async (err: unknown) => {
      // A concurrent request with the same idempotency key won the unique index: answer its job.
      const winner = await findByIdempotencyKey(db, j.key.id, j.idempotencyKey);
      if (winner) return winner;
      throw err;
    });
  if (outcome) return { job: outcome, created: false };
  return { job: (await getJob(db, id))!, created: true };
}

function sameOrConflict(job: JobRow, sha256: string): JobRow {
  if (job.sha256 !== sha256) throw new ApiError('idempotency_conflict', 'idempotencyKey was used with another sha256');
  return job;
}

/**
 * Requested features: known names only (unknown ones dropped, not rejected), all when omitted.
 * Accepted: those the key allows, minus emotion and gaze when this node has no weights (never
 * billed then: pricing charges the accepted set).
 */
export async function resolveFeatures(
  ctx: AppContext,
  key: KeyRecord,
  features: readonly string[] | undefined,
): Promise<{ requested: string[]; accepted: string[] }> {
  const known = FEATURES as readonly string[];
  const requested = features === undefined ? [...known] : known.filter((f) => features.includes(f));
  let accepted = requested.filter((f) => key.features.includes(f));
  if (accepted.includes('emotion') || accepted.includes('gaze')) {
    const caps = await batchOf(ctx)
      .auxCapabilities()
      .catch(() => ({ emotion: false, gaze: false }));
    accepted = accepted.filter((f) => (f === 'emotion' ? caps.emotion : f === 'gaze' ? caps.gaze : true));
  }
  return { requested, accepted };
}

/** Seconds to check spending against: the frames header's duration; for a video the 20 s minimum. */
async function estimateSeconds(ctx: AppContext, body: JobCreate): Promise<number> {
  if (body.kind !== 'frames') return VIDEO_MIN_DURATION_SEC;
  const stream = await batchOf(ctx).objects.read(body.objectKey);
  if (!stream) return 0;
  let head = Buffer.alloc(0);
  for await (const c of stream) {
    head = Buffer.concat([head, c as Buffer]);
    if (head.length >= FRAMES_HEADER_BYTES) break;
  }
  stream.destroy();
  const h = decodeFramesHeader(head);
  return h.ok ? Math.min(3600, h.header.durationMicros / 1e6) : 0;
}
