/**
 * 007: refused signatures that are not logged as usage rows, counted per client address, hour and
 * code (issue 19; store/auth-rejections.ts). `key_id` is '' for a key id that names no key (or none
 * sent); a known key's id appears here only for its refusals past the per-address throttle.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('auth_rejections')
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('bucket_start', 'bigint', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('error_code', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addColumn('last_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('auth_rejections_pk', ['address', 'bucket_start', 'key_id', 'error_code'])
    .execute();
  await db.schema.createIndex('auth_rejections_bucket').on('auth_rejections').column('bucket_start').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('auth_rejections').execute();
}
