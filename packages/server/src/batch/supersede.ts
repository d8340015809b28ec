/**
 * `supersedes` (spec: States and transitions — "any job named in supersedes → aborted; its seconds
 * are not counted, so the capture is not metered twice"). A live job or session (pending, queued,
 * running) is settled `aborted` with `error.code: superseded` — settlement of an abort never meters,
 * and a worker or socket still holding it loses the compare-and-set when it tries to settle.
 * A job already terminal keeps its status, error and measurement (a result already delivered is not
 * taken back); only the link `superseded_by` is recorded (docs/decisions.md).
 */
import type { AppContext } from '../context.js';
import { settleJob } from '../domain/jobs.js';
import { isTerminal, type JobRow } from '../store/jobs.js';

export async function supersede(ctx: AppContext, target: JobRow, byJobId: string): Promise<boolean> {
  const db = ctx.db.db;
  await db.updateTable('cloud_jobs').set({ superseded_by: byJobId }).where('id', '=', target.id).execute();
  if (isTerminal(target.status)) return false;
  return settleJob(ctx, target.id, { status: 'aborted', code: 'superseded', message: `superseded by ${byJobId}` });
}
