/** The webhook tables (migrations/003-batch.ts): endpoints, deliveries (the journal), attempts. */
import { JOB_WEBHOOK_ATTEMPTS } from '@vitals/protocol';
import type { Kysely, Selectable } from 'kysely';
import type { Database, WebhookDeliveriesTable, WebhookEndpointsTable } from '../store/schema.js';

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type EndpointRow = Selectable<WebhookEndpointsTable>;

const NUMERIC = [
  'attempts',
  'max_attempts',
  'next_attempt_at',
  'lease_until',
  'last_status_code',
  'last_response_ms',
  'created_at',
  'updated_at',
] as const;

export function normalizeDelivery(r: DeliveryRow): DeliveryRow {
  const out = { ...r } as Record<string, unknown>;
  for (const k of NUMERIC) if (out[k] !== null && out[k] !== undefined) out[k] = Number(out[k]);
  return out as unknown as DeliveryRow;
}

/** The attempt state of a delivery that has not been tried yet (first delivery or redelivery). */
export function pendingAttemptState(now: number) {
  return {
    status: 'pending',
    attempts: 0,
    max_attempts: JOB_WEBHOOK_ATTEMPTS,
    next_attempt_at: now,
    lease_until: null,
    last_status_code: null,
    last_error: null,
    last_response_ms: null,
    created_at: now,
    updated_at: now,
  } as const;
}

export async function insertDelivery(db: Kysely<Database>, row: WebhookDeliveriesTable): Promise<void> {
  await db.insertInto('webhook_deliveries').values(row).execute();
}

export async function getDelivery(db: Kysely<Database>, id: string): Promise<DeliveryRow | undefined> {
  const r = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  return r && normalizeDelivery(r);
}

/** Takes a due delivery for `leaseMs` (compare-and-set, so two workers never send the same attempt). */
export async function claimDelivery(db: Kysely<Database>, id: string, now: number, leaseMs: number): Promise<boolean> {
  const res = await db
    .updateTable('webhook_deliveries')
    .set({ lease_until: now + leaseMs })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function dueDeliveries(db: Kysely<Database>, now: number, limit = 20): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export interface DeliveryFilter {
  orgId?: string;
  jobId?: string;
  endpointId?: string;
  event?: string;
  status?: string;
  /** Keyset paging, newest first: rows strictly older than (createdAt, id). */
  before?: { createdAt: number; id: string };
  limit: number;
}

/** The journal, newest first (the operator's `webhooks journal` and the console's journal page). */
export async function listDeliveries(db: Kysely<Database>, filter: DeliveryFilter): Promise<DeliveryRow[]> {
  let q = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.limit);
  if (filter.orgId) q = q.where('org_id', '=', filter.orgId);
  if (filter.jobId) q = q.where('job_id', '=', filter.jobId);
  if (filter.endpointId) q = q.where('endpoint_id', '=', filter.endpointId);
  if (filter.event) q = q.where('event', '=', filter.event);
  if (filter.status) q = q.where('status', '=', filter.status);
  const b = filter.before;
  if (b)
    q = q.where((eb) =>
      eb.or([eb('created_at', '<', b.createdAt), eb.and([eb('created_at', '=', b.createdAt), eb('id', '<', b.id)])]),
    );
  return (await q.execute()).map(normalizeDelivery);
}

export async function attemptsOf(db: Kysely<Database>, deliveryId: string) {
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('attempt')
    .execute();
  return rows.map((r) => ({ ...r, at: Number(r.at), ok: Number(r.ok) === 1, attempt: Number(r.attempt) }));
}

export async function getEndpoint(db: Kysely<Database>, id: string): Promise<EndpointRow | undefined> {
  const r = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  return (
    r && { ...r, created_at: Number(r.created_at), rotated_at: r.rotated_at === null ? null : Number(r.rotated_at) }
  );
}

export async function activeEndpoints(db: Kysely<Database>, orgId: string): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('status', '=', 'active')
    .orderBy('created_at')
    .execute();
}
