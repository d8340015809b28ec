/**
 * The object TTL (spec: Limits, "Uploaded-object TTL: 1 hour from presign, swept regardless of job
 * status; deleted as soon as the job finishes"). A swept object's queued job becomes `expired`
 * (States and transitions), which fires the organization webhook `cloud.job.expired`.
 */
import type { AppContext } from '../context.js';
import { settleJob } from '../domain/jobs.js';
import type { BatchRuntime } from './batch-runtime.js';
import { expiredSettlement } from './process.js';
import { FsObjectStore } from '../objects/fs-store.js';
import { settleOrphanedSessions } from './orphans.js';
import { expireUnusedSessions } from './unused-sessions.js';

/** Deletes an object and marks its record; safe to call twice. */
export async function deleteObject(ctx: AppContext, rt: BatchRuntime, objectKey: string): Promise<void> {
  await rt.objects.delete(objectKey);
  await ctx.db.db
    .updateTable('uploads')
    .set({ deleted_at: ctx.clock.now() })
    .where('object_key', '=', objectKey)
    .where('deleted_at', 'is', null)
    .execute();
}

export async function sweepOnce(
  ctx: AppContext,
  rt: BatchRuntime,
): Promise<{ swept: number; expiredJobs: number; unremoved: number }> {
  const db = ctx.db.db;
  const now = ctx.clock.now();
  const due = await db
    .selectFrom('uploads')
    .select(['object_key', 'job_id'])
    .where('deleted_at', 'is', null)
    .where('expires_at', '<=', now)
    .limit(500)
    .execute();
  let expiredJobs = 0;
  for (const u of due) {
    await deleteObject(ctx, rt, u.object_key);
    if (!u.job_id) continue;
    // Only a job that has not run yet expires; a running job already holds its bytes.
    const job = await db
      .selectFrom('cloud_jobs')
      .select(['id', 'status'])
      .where('id', '=', u.job_id)
      .executeTakeFirst();
    if (job?.status === 'queued' && (await settleJob(ctx, job.id, expiredSettlement()))) expiredJobs++;
  }
  // Safety net for objects without a live record (an upload interrupted by a crash): by real time.
  // Any adapter (the folder, S3); only the folder lists its temporary files (`.tmp-…`).
  const objects = rt.objects;
  let unremoved = 0;
  for (const name of await objects.listOlderThan(Date.now() - ctx.config.uploadTtlSec * 1000)) {
    // One entry that cannot be removed (a stray file in the folder, a store hiccup) must not stop
    // the rest of the sweep, run after run.
    try {
      if (name.startsWith('.tmp-')) {
        if (objects instanceof FsObjectStore) await objects.deleteRaw(name);
      } else {
        const live = await db
          .selectFrom('uploads')
          .select('object_key')
          .where('object_key', '=', name)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (!live) await objects.delete(name);
      }
    } catch {
      unremoved++;
    }
  }
  await settleOrphanedSessions(ctx);
  await expireUnusedSessions(ctx);
  return { swept: due.length, expiredJobs, unremoved };
}
