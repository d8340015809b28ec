/**
 * 006: the console (issue 16). `console_accounts`: one account per email, each of exactly one
 * organization, its password as an scrypt string naming its parameters; `console_sessions`: the
 * SHA-256 of each session id (never the id), with idle and absolute expiry; `console_purchases`:
 * token packs bought through the payment-provider port, credited once; `api_keys.name`: a label
 * the console shows.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('console_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_accounts_org').on('console_accounts').columns(['org_id']).execute();

  await db.schema
    .createTable('console_sessions')
    .addColumn('id_sha256', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('console_sessions_account').on('console_sessions').columns(['account_id']).execute();
  await db.schema.createIndex('console_sessions_expiry').on('console_sessions').columns(['expires_at']).execute();

  await db.schema
    .createTable('console_purchases')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text')
    .addColumn('pack_id', 'text', (c) => c.notNull())
    .addColumn('price_micro', 'bigint', (c) => c.notNull())
    .addColumn('tokens_micro', 'bigint', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_ref', 'text')
    .addColumn('status', 'text', (c) => c.notNull()) // pending | completed | failed
    .addColumn('credited', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('console_purchases_org')
    .on('console_purchases')
    .columns(['org_id', 'created_at'])
    .execute();

  await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
  await db.schema.createIndex('api_keys_org').on('api_keys').columns(['org_id']).execute();
  await db.schema.createIndex('measurements_org_time').on('measurements').columns(['org_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('measurements_org_time').execute();
  await db.schema.dropIndex('api_keys_org').execute();
  await db.schema.alterTable('api_keys').dropColumn('name').execute();
  for (const t of ['console_purchases', 'console_sessions', 'console_accounts']) await db.schema.dropTable(t).execute();
}
