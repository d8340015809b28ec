/**
 * 003: the batch tier. `uploads` records every presigned object (who may use it, its kind, content
 * type and TTL; the bytes live in the object store); `webhook_endpoints` are organization endpoints;
 * `webhook_deliveries` is the delivery journal (one row per delivery, processed by the workers from
 * `next_attempt_at`, so deliveries survive a restart) and `webhook_attempts` records every attempt.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('uploads')
    .addColumn('object_key', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('max_bytes', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('url_expires_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('uploaded_at', 'bigint')
    .addColumn('size', 'bigint')
    .addColumn('sha256', 'text')
    .addColumn('job_id', 'text')
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema.createIndex('uploads_expiry').on('uploads').columns(['deleted_at', 'expires_at']).execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret_sha256', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('rotated_at', 'bigint')
    .execute();
  await db.schema.createIndex('webhook_endpoints_org').on('webhook_endpoints').columns(['org_id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('target', 'text', (c) => c.notNull()) // job | endpoint
    .addColumn('endpoint_id', 'text')
    .addColumn('org_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('job_id', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull()) // pending | succeeded | failed
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_response_ms', 'integer')
    .addColumn('redelivery_of', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_org')
    .on('webhook_deliveries')
    .columns(['org_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('ok', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('response_ms', 'integer')
    .addColumn('remote_address', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
    .execute();

  await db.schema.createIndex('cloud_jobs_object').on('cloud_jobs').columns(['object_key']).execute();
  await db.schema.createIndex('cloud_jobs_supersedes').on('cloud_jobs').columns(['supersedes']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['webhook_attempts', 'webhook_deliveries', 'webhook_endpoints', 'uploads'])
    await db.schema.dropTable(t).ifExists().execute();
  await db.schema.dropIndex('cloud_jobs_object').ifExists().execute();
  await db.schema.dropIndex('cloud_jobs_supersedes').ifExists().execute();
}
