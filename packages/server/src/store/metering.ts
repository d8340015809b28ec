/** Monthly usage per key: cloud seconds and tokens spent (persisted; spec: Rate limits). */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export function monthOf(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 7);
}

export async function getMonthUsage(
  db: Kysely<Database>,
  keyId: string,
  month: string,
): Promise<{ cloudSeconds: number; tokensMicro: number }> {
  const row = await db
    .selectFrom('usage_month')
    .select(['cloud_seconds', 'tokens_micro'])
    .where('key_id', '=', keyId)
    .where('month', '=', month)
    .executeTakeFirst();
  return { cloudSeconds: Number(row?.cloud_seconds ?? 0), tokensMicro: Number(row?.tokens_micro ?? 0) };
}

/** Adds to a key's month atomically (upsert; works on SQLite and PostgreSQL alike). */
export async function addMonthUsage(
  db: Kysely<Database>,
  keyId: string,
  month: string,
  seconds: number,
  tokensMicro: number,
): Promise<void> {
  await db
    .insertInto('usage_month')
    .values({ key_id: keyId, month, cloud_seconds: seconds, tokens_micro: tokensMicro })
    .onConflict((oc) =>
      oc.columns(['key_id', 'month']).doUpdateSet({
        cloud_seconds: sql`usage_month.cloud_seconds + ${seconds}`,
        tokens_micro: sql`usage_month.tokens_micro + ${tokensMicro}`,
      }),
    )
    .execute();
}
