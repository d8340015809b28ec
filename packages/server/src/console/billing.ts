/**
 * Billing domain code (issue 16): purchases of token packs, crediting the organization's balance
 * exactly once per purchase, and spend by month over the organization's keys.
 */
import type { Kysely } from 'kysely';
import type { ConsolePurchase } from '@vitals/protocol';
import type { Database } from '../store/schema.js';
import { creditTokenBalance, microFromUsd, usdFromMicro } from '../store/orgs-keys.js';
import { pooledHex } from '../ids.js';
import type { PackToBuy, PaymentProvider } from './payments.js';

export class PurchaseError extends Error {
  constructor(
    message: string,
    readonly reason: 'disabled' | 'unmetered' | 'failed',
  ) {
    super(message);
  }
}

const view = (r: Database['console_purchases']): ConsolePurchase => ({
  id: r.id,
  packId: r.pack_id,
  priceUsd: usdFromMicro(Number(r.price_micro)),
  tokensUsd: usdFromMicro(Number(r.tokens_micro)),
  provider: r.provider,
  status: r.status as ConsolePurchase['status'],
  createdAt: Number(r.created_at),
});

export async function listPurchases(db: Kysely<Database>, orgId: string, limit = 20): Promise<ConsolePurchase[]> {
  const rows = await db
    .selectFrom('console_purchases')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map(view);
}

/**
 * Marks a purchase completed and adds its tokens to the balance, once: the compare-and-set on
 * `credited` makes a second confirmation (a processor retrying its webhook) a no-op. An unmetered
 * organization (balance never set) has nothing to credit; buying is refused before we get here.
 */
export async function completePurchase(db: Kysely<Database>, purchaseId: string, now: number): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    const res = await tx
      .updateTable('console_purchases')
      .set({ credited: 1, status: 'completed', updated_at: now })
      .where('id', '=', purchaseId)
      .where('credited', '=', 0)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    const p = await tx
      .selectFrom('console_purchases')
      .select(['org_id', 'tokens_micro'])
      .where('id', '=', purchaseId)
      .executeTakeFirstOrThrow();
    await creditTokenBalance(tx, p.org_id, Number(p.tokens_micro));
    return true;
  });
}

/** Buys `pack` for the organization through `provider`; the purchase as recorded. */
export async function buyPack(
  db: Kysely<Database>,
  provider: PaymentProvider,
  input: { orgId: string; accountId: string; pack: PackToBuy; metered: boolean },
  now: number,
): Promise<ConsolePurchase> {
  if (!provider.enabled) throw new PurchaseError('purchases are not enabled on this server', 'disabled');
  if (!input.metered)
    throw new PurchaseError('this organization is unmetered: there is no balance to credit', 'unmetered');
  const id = `pur_${pooledHex(12)}`;
  const row: Database['console_purchases'] = {
    id,
    org_id: input.orgId,
    account_id: input.accountId,
    pack_id: input.pack.id,
    price_micro: microFromUsd(input.pack.priceUsd),
    tokens_micro: microFromUsd(input.pack.tokensUsd),
    provider: provider.name,
    provider_ref: null,
    status: 'pending',
    credited: 0,
    created_at: now,
    updated_at: now,
  };
  await db.insertInto('console_purchases').values(row).execute();
  const outcome = await provider.purchase({
    purchaseId: id,
    orgId: input.orgId,
    accountId: input.accountId,
    pack: input.pack,
  });
  if (outcome.status === 'failed') {
    await db.updateTable('console_purchases').set({ status: 'failed', updated_at: now }).where('id', '=', id).execute();
    throw new PurchaseError(outcome.reason, 'failed');
  }
  if (outcome.reference !== null)
    await db.updateTable('console_purchases').set({ provider_ref: outcome.reference }).where('id', '=', id).execute();
  if (outcome.status === 'completed') await completePurchase(db, id, now);
  const done = await db.selectFrom('console_purchases').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  return view(done);
}

/** Tokens and cloud seconds per month over the organization's keys, newest month first. */
export async function spendByMonth(db: Kysely<Database>, orgId: string, months = 12) {
  const rows = await db
    .selectFrom('usage_month')
    .select((eb) => [
      'month',
      eb.fn.sum<number>('tokens_micro').as('tokens'),
      eb.fn.sum<number>('cloud_seconds').as('seconds'),
    ])
    .where('key_id', 'in', (eb) => eb.selectFrom('api_keys').select('id').where('org_id', '=', orgId))
    .groupBy('month')
    .orderBy('month', 'desc')
    .limit(months)
    .execute();
  return rows.map((r) => ({
    month: r.month,
    tokensUsd: usdFromMicro(Number(r.tokens)),
    cloudSeconds: Number(r.seconds),
  }));
}
