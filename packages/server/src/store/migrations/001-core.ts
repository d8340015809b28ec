/** 001: organizations, API keys, nonces, usage log, measurements, monthly usage. */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('orgs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_balance_micro', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull().references('orgs.id'))
    .addColumn('secret_sha256', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('features', 'text', (c) => c.notNull())
    .addColumn('rate_limit_per_min', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('quota_seconds_month', 'bigint')
    .addColumn('token_quota_month_micro', 'bigint')
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('nonces')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('nonces_pk', ['key_id', 'nonce'])
    .execute();
  await db.schema.createIndex('nonces_expiry').on('nonces').column('expires_at').execute();

  await db.schema
    .createTable('usage_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text')
    .addColumn('time', 'bigint', (c) => c.notNull())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('latency_ms', 'integer')
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('error_code', 'text')
    .addColumn('quality_level', 'text')
    .execute();
  await db.schema.createIndex('usage_log_key_time').on('usage_log').columns(['key_id', 'time', 'id']).execute();

  await db.schema
    .createTable('measurements')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('user_ref', 'text')
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('doc', 'text', (c) => c.notNull())
    .addColumn('raw', 'text')
    .addColumn('quality_level', 'text')
    .addColumn('quality_score', sql`double precision`)
    .addColumn('usable', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_complete', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('heart_rate_bpm', sql`double precision`)
    .addColumn('rmssd_ms', sql`double precision`)
    .addColumn('sdnn_ms', sql`double precision`)
    .addColumn('breathing_rate', sql`double precision`)
    .addColumn('stress_index', sql`double precision`)
    .addColumn('systolic_mmhg', sql`double precision`)
    .addColumn('diastolic_mmhg', sql`double precision`)
    .addColumn('spo2_pct', sql`double precision`)
    .execute();
  await db.schema
    .createIndex('measurements_user')
    .on('measurements')
    .columns(['key_id', 'user_ref', 'created_at'])
    .execute();

  await db.schema
    .createTable('usage_month')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('cloud_seconds', sql`double precision`, (c) => c.notNull().defaultTo(0))
    .addColumn('tokens_micro', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_month_pk', ['key_id', 'month'])
    .execute();

  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['settings', 'usage_month', 'measurements', 'usage_log', 'nonces', 'api_keys', 'orgs']) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
