/**
 * 002: cloud jobs. A streaming session and a batch job are the same resource (`cj_` id, spec:
 * Cloud job), so one table holds both; `mode` tells them apart.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('cloud_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('frames_processed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('seconds_processed', sql`double precision`, (c) => c.notNull().defaultTo(0))
    .addColumn('measurement_id', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('user_ref', 'text')
    .addColumn('client_ref', 'text')
    .addColumn('platform', 'text')
    .addColumn('features', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('accepted_features', 'text')
    .addColumn('duration_sec', sql`double precision`)
    .addColumn('object_key', 'text')
    .addColumn('sha256', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('webhook_url', 'text')
    .addColumn('supersedes', 'text')
    .addColumn('superseded_by', 'text')
    .addColumn('metered', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('stats', 'text')
    .execute();
  // (key, idempotencyKey) is unique: concurrent duplicates create one job (spec: POST /sdk/v1/cloud/jobs).
  await db.schema
    .createIndex('cloud_jobs_idem')
    .unique()
    .on('cloud_jobs')
    .columns(['key_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('cloud_jobs_status').on('cloud_jobs').columns(['status', 'updated_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('cloud_jobs').ifExists().execute();
}
