/** Organizations and API keys. Secrets are stored only as their SHA-256 (spec: Authentication 4). */
import type { Kysely } from 'kysely';
import { newKeyId, newKeySecret, newOrgId, sha256Hex, FEATURES } from '@vitals/protocol';
import type { Database } from './schema.js';

export interface OrgRecord {
  id: string;
  name: string;
  /**
   * The token balance in micro-dollars, or null: the organization is unmetered (its balance was
   * never set, or was cleared; CLARIFICATIONS 28). Stored as `orgs.metered` + `token_balance_micro`.
   */
  tokenBalanceMicro: number | null;
  createdAt: number;
}

export interface KeyRecord {
  id: string;
  orgId: string;
  secretSha256: string;
  status: 'active' | 'disabled';
  mode: 'live' | 'test';
  features: string[];
  rateLimitPerMin: number;
  quotaSecondsMonth: number | null;
  tokenQuotaMonthMicro: number | null;
  expiresAt: number | null;
  createdAt: number;
}

export interface CreateKeyInput {
  orgId: string;
  rateLimitPerMin?: number;
  quotaSecondsMonth?: number | null;
  tokenQuotaMonthMicro?: number | null;
  expiresAt?: number | null;
  features?: string[];
  mode?: 'live' | 'test';
  status?: 'active' | 'disabled';
}

export const microFromUsd = (usd: number): number => Math.round(usd * 1_000_000);
export const usdFromMicro = (micro: number): number => Math.round(micro) / 1_000_000;

/** Creates an organization; `tokenBalanceUsd` null (the default for operators) makes it unmetered. */
export async function createOrg(
  db: Kysely<Database>,
  name: string,
  tokenBalanceUsd: number | null,
  now: number,
): Promise<OrgRecord> {
  const micro = tokenBalanceUsd === null ? null : microFromUsd(tokenBalanceUsd);
  const org = { id: newOrgId(), name, created_at: now, ...balanceColumns(micro) };
  await db.insertInto('orgs').values(org).execute();
  return { id: org.id, name, tokenBalanceMicro: micro, createdAt: now };
}

export async function getOrg(db: Kysely<Database>, id: string): Promise<OrgRecord | undefined> {
  const row = await db.selectFrom('orgs').selectAll().where('id', '=', id).executeTakeFirst();
  return (
    row && {
      id: row.id,
      name: row.name,
      tokenBalanceMicro: Number(row.metered) ? Number(row.token_balance_micro) : null,
      createdAt: Number(row.created_at),
    }
  );
}

/** The stored form of a balance: null (unmetered) keeps 0 in the unused balance column. */
const balanceColumns = (micro: number | null): { token_balance_micro: number; metered: number } =>
  micro === null ? { token_balance_micro: 0, metered: 0 } : { token_balance_micro: micro, metered: 1 };

/**
 * Sets an organization's balance to `tokenBalanceMicro` (which turns the balance check on), or
 * clears it with null (unmetered). False when there is no such organization. Callers validate the
 * amount (domain/balance.ts setTokenBalance).
 */
export async function setOrgTokenBalance(
  db: Kysely<Database>,
  orgId: string,
  tokenBalanceMicro: number | null,
): Promise<boolean> {
  const res = await db
    .updateTable('orgs')
    .set(balanceColumns(tokenBalanceMicro))
    .where('id', '=', orgId)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** Creates a key and returns its secret, which is never stored and never shown again. */
export async function createKey(
  db: Kysely<Database>,
  input: CreateKeyInput,
  now: number,
): Promise<{ key: KeyRecord; secret: string }> {
  const secret = newKeySecret();
  const features = (input.features ?? [...FEATURES]).filter((f) => (FEATURES as readonly string[]).includes(f));
  const row = {
    id: newKeyId(),
    org_id: input.orgId,
    secret_sha256: await sha256Hex(secret),
    status: input.status ?? 'active',
    mode: input.mode ?? 'live',
    features: JSON.stringify(features),
    rate_limit_per_min: input.rateLimitPerMin ?? 0,
    quota_seconds_month: input.quotaSecondsMonth ?? null,
    token_quota_month_micro: input.tokenQuotaMonthMicro ?? null,
    expires_at: input.expiresAt ?? null,
    created_at: now,
  };
  await db.insertInto('api_keys').values(row).execute();
  return { key: toKey(row), secret };
}

function toKey(row: Database['api_keys']): KeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    secretSha256: row.secret_sha256,
    status: row.status === 'active' ? 'active' : 'disabled',
    mode: row.mode === 'test' ? 'test' : 'live',
    features: JSON.parse(row.features) as string[],
    rateLimitPerMin: Number(row.rate_limit_per_min),
    quotaSecondsMonth: row.quota_seconds_month === null ? null : Number(row.quota_seconds_month),
    tokenQuotaMonthMicro: row.token_quota_month_micro === null ? null : Number(row.token_quota_month_micro),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
    createdAt: Number(row.created_at),
  };
}

export async function getKey(db: Kysely<Database>, id: string): Promise<KeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toKey(row);
}

export async function setKeyStatus(db: Kysely<Database>, id: string, status: 'active' | 'disabled'): Promise<boolean> {
  const res = await db.updateTable('api_keys').set({ status }).where('id', '=', id).executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Draws a settled job's cost from its organization's balance (domain/jobs.ts settleJob, inside the
 * settlement transaction). An unmetered organization has no balance to draw from; its usage is
 * still recorded per key (store/metering.ts).
 */
export async function drawDownTokenBalance(db: Kysely<Database>, orgId: string, micro: number): Promise<void> {
  await db
    .updateTable('orgs')
    .set((eb) => ({ token_balance_micro: eb('token_balance_micro', '-', micro) }))
    .where('id', '=', orgId)
    .where('metered', '=', 1)
    .execute();
}
