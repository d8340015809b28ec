/**
 * Journals the deliveries a settled job owes (an after-settle hook, batch/runtime.ts): its own
 * `webhookUrl` if it has one, and one per active endpoint of its organization. Rows are due at once;
 * the workers send them (dispatcher.ts), so a delivery survives a restart.
 */
import { newDeliveryId } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import type { JobRow } from '../store/jobs.js';
import { activeEndpoints, insertDelivery, pendingAttemptState } from './journal.js';
import { eventOfStatus } from './events.js';

export async function journalSettlement(ctx: AppContext, job: JobRow): Promise<string[]> {
  const event = eventOfStatus(job.status);
  if (!event) return [];
  const db = ctx.db.db;
  const now = ctx.clock.now();
  const ids: string[] = [];
  const base = {
    org_id: job.org_id,
    job_id: job.id,
    event,
    ...pendingAttemptState(now),
    redelivery_of: null,
  };
  if (job.webhook_url) {
    const id = newDeliveryId();
    await insertDelivery(db, {
      ...base,
      id,
      target: 'job',
      endpoint_id: null,
      key_id: job.key_id,
      url: job.webhook_url,
    });
    ids.push(id);
  }
  for (const ep of await activeEndpoints(db, job.org_id)) {
    const id = newDeliveryId();
    await insertDelivery(db, { ...base, id, target: 'endpoint', endpoint_id: ep.id, key_id: null, url: ep.url });
    ids.push(id);
  }
  return ids;
}
