/**
 * Organization webhook endpoints (spec: Job webhooks; at most 5 per organization). The `whsec_`
 * secret is returned once, at creation or rotation; only its SHA-256 is stored, which is exactly the
 * HMAC key deliveries are signed with, so nothing more is needed to sign.
 */
import { ORG_WEBHOOK_LIMIT, newWebhookEndpointId, newWebhookSecret, sha256Hex } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { getOrg } from '../store/orgs-keys.js';
import { checkWebhookUrl, parseAllowList } from './ssrf.js';
import { getEndpoint } from './journal.js';

/** Why an endpoint change was refused: the console maps `limit` to 409, the others to 400 / 404. */
export class EndpointError extends Error {
  constructor(
    message: string,
    readonly reason: 'no_org' | 'invalid_url' | 'limit' | 'not_found' = 'invalid_url',
  ) {
    super(message);
  }
}

export async function createEndpoint(
  ctx: AppContext,
  orgId: string,
  url: string,
): Promise<{ id: string; secret: string }> {
  const db = ctx.db.db;
  if (!(await getOrg(db, orgId))) throw new EndpointError(`no organization ${orgId}`, 'no_org');
  const checked = checkWebhookUrl(url, parseAllowList(ctx.config.webhookAllowHosts));
  if (!checked.ok) throw new EndpointError(checked.reason.replace(/^webhookUrl/, 'url'), 'invalid_url');
  const count = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  if (Number(count.n) >= ORG_WEBHOOK_LIMIT)
    throw new EndpointError(`organization ${orgId} already has ${ORG_WEBHOOK_LIMIT} webhook endpoints`, 'limit');
  const id = newWebhookEndpointId();
  const secret = newWebhookSecret();
  await db
    .insertInto('webhook_endpoints')
    .values({
      id,
      org_id: orgId,
      url: checked.url.href,
      secret_sha256: await sha256Hex(secret),
      status: 'active',
      created_at: ctx.clock.now(),
      rotated_at: null,
    })
    .execute();
  return { id, secret };
}

export async function rotateEndpoint(ctx: AppContext, id: string): Promise<{ id: string; secret: string }> {
  if (!(await getEndpoint(ctx.db.db, id))) throw new EndpointError(`no webhook endpoint ${id}`, 'not_found');
  const secret = newWebhookSecret();
  await ctx.db.db
    .updateTable('webhook_endpoints')
    .set({ secret_sha256: await sha256Hex(secret), rotated_at: ctx.clock.now() })
    .where('id', '=', id)
    .execute();
  return { id, secret };
}

export async function deleteEndpoint(ctx: AppContext, id: string): Promise<boolean> {
  const res = await ctx.db.db
    .updateTable('webhook_endpoints')
    .set({ status: 'deleted' })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function listEndpoints(ctx: AppContext, orgId?: string) {
  let q = ctx.db.db
    .selectFrom('webhook_endpoints')
    .select(['id', 'org_id', 'url', 'status', 'created_at', 'rotated_at'])
    .where('status', '=', 'active');
  if (orgId) q = q.where('org_id', '=', orgId);
  const rows = await q.orderBy('created_at').execute();
  return rows.map((r) => ({
    id: r.id,
    orgId: r.org_id,
    url: r.url,
    status: r.status,
    createdAt: Number(r.created_at),
    rotatedAt: r.rotated_at === null ? null : Number(r.rotated_at),
  }));
}
