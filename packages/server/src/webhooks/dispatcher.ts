/**
 * Sends due deliveries from the journal: claim (compare-and-set lease), rebuild the body from the
 * job's current state, check the target at this attempt, send, journal the attempt, then either
 * finish or schedule the next one (exponential backoff: base * 4^(n-1)). Up to 3 attempts.
 */
import { newDeliveryId, WEBHOOK_ATTEMPT_TIMEOUT_MS, type CloudJob } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import type { BatchRuntime } from '../batch/batch-runtime.js';
import { jobToWire } from '../domain/jobs.js';
import { getJob } from '../store/jobs.js';
import { getKey } from '../store/orgs-keys.js';
import { attemptDelivery, type AttemptResult } from './deliver.js';
import { checkWebhookUrl, parseAllowList } from './ssrf.js';
import {
  claimDelivery,
  dueDeliveries,
  getDelivery,
  getEndpoint,
  insertDelivery,
  pendingAttemptState,
  type DeliveryRow,
} from './journal.js';
import { endpointDelivery, jobDelivery, TEST_EVENT, type SignedBody } from './events.js';

const CLAIM_MS = WEBHOOK_ATTEMPT_TIMEOUT_MS * 3;

export async function deliverDue(ctx: AppContext, rt: BatchRuntime): Promise<number> {
  let sent = 0;
  for (const id of await dueDeliveries(ctx.db.db, ctx.clock.now())) {
    if (await deliverOne(ctx, rt, id)) sent++;
  }
  return sent;
}

/** One attempt of one delivery, if it is due and this process wins it. */
export async function deliverOne(ctx: AppContext, rt: BatchRuntime, id: string): Promise<boolean> {
  const db = ctx.db.db;
  if (!(await claimDelivery(db, id, ctx.clock.now(), CLAIM_MS))) return false;
  const d = await getDelivery(db, id);
  if (!d) return false;
  const attempt = d.attempts + 1;
  const result = await attemptFor(ctx, rt, d);
  const now = ctx.clock.now();
  await db
    .insertInto('webhook_attempts')
    .values({
      delivery_id: id,
      attempt,
      at: now,
      ok: result.ok ? 1 : 0,
      status_code: result.statusCode,
      error: result.error,
      response_ms: result.responseMs,
      remote_address: result.remoteAddress,
    })
    .execute();
  const last = attempt >= d.max_attempts;
  await db
    .updateTable('webhook_deliveries')
    .set({
      attempts: attempt,
      status: result.ok ? 'succeeded' : last ? 'failed' : 'pending',
      next_attempt_at: result.ok || last ? null : now + rt.settings.webhookRetryBaseMs * 4 ** (attempt - 1),
      lease_until: null,
      last_status_code: result.statusCode,
      last_error: result.error,
      last_response_ms: result.responseMs,
      updated_at: now,
    })
    .where('id', '=', id)
    .execute();
  return true;
}

async function attemptFor(ctx: AppContext, rt: BatchRuntime, d: DeliveryRow): Promise<AttemptResult> {
  const fail = (error: string): AttemptResult => ({
    ok: false,
    statusCode: null,
    error,
    responseMs: 0,
    remoteAddress: null,
  });
  const allow = parseAllowList(ctx.config.webhookAllowHosts);
  const checked = checkWebhookUrl(d.url, allow);
  if (!checked.ok) return fail(`refused: ${checked.reason}`);
  let signed: SignedBody;
  try {
    const built = await buildRequest(ctx, d, checked.url);
    if (!built) return fail('the job or endpoint no longer exists');
    signed = built;
  } catch (err) {
    return fail(`could not build the body: ${(err as Error).message}`);
  }
  return attemptDelivery(checked.url, signed.body, signed.headers, allow, rt.delivery);
}

async function buildRequest(ctx: AppContext, d: DeliveryRow, url: URL): Promise<SignedBody | undefined> {
  const db = ctx.db.db;
  const nowSec = Math.floor(ctx.clock.now() / 1000);
  let data: CloudJob | Record<string, unknown>;
  if (d.event === TEST_EVENT) data = { test: true, message: 'webhook.test from vitals-server' };
  else {
    const job = d.job_id ? await getJob(db, d.job_id) : undefined;
    if (!job) return undefined;
    data = await jobToWire(db, job);
  }
  if (d.target === 'job') {
    const key = d.key_id ? await getKey(db, d.key_id) : undefined;
    if (!key) return undefined;
    return jobDelivery(url, data as CloudJob, key.id, key.secretSha256, nowSec);
  }
  // Read at each attempt: a rotated secret signs the next attempt (CLARIFICATIONS 9).
  const ep = d.endpoint_id ? await getEndpoint(db, d.endpoint_id) : undefined;
  if (!ep || ep.status !== 'active') return undefined;
  return endpointDelivery(
    url,
    { id: d.id, event: d.event, createdAt: d.created_at, data },
    ep.id,
    ep.secret_sha256,
    nowSec,
  );
}

/**
 * A new delivery of the same event to the same target: a new `whd_` id, a fresh attempt budget, the
 * body rebuilt from the job as it is now.
 */
export async function redeliver(ctx: AppContext, deliveryId: string): Promise<string | undefined> {
  const d = await getDelivery(ctx.db.db, deliveryId);
  if (!d) return undefined;
  const now = ctx.clock.now();
  const id = newDeliveryId();
  await insertDelivery(ctx.db.db, {
    ...d,
    ...pendingAttemptState(now),
    id,
    redelivery_of: d.id,
  });
  return id;
}

/** Journals a `webhook.test` delivery to an endpoint (the console's test button). */
export async function journalTest(ctx: AppContext, endpointId: string): Promise<string | undefined> {
  const ep = await getEndpoint(ctx.db.db, endpointId);
  if (!ep) return undefined;
  const now = ctx.clock.now();
  const id = newDeliveryId();
  await insertDelivery(ctx.db.db, {
    id,
    target: 'endpoint',
    endpoint_id: ep.id,
    org_id: ep.org_id,
    key_id: null,
    job_id: null,
    event: TEST_EVENT,
    url: ep.url,
    ...pendingAttemptState(now),
    redelivery_of: null,
  });
  return id;
}
