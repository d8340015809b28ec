/**
 * 005 (issue 14):
 *
 * - `orgs.metered`: 0 = the organization is unmetered (CLARIFICATIONS 28: its token balance was never
 *   set, so no balance check and no `insufficient_tokens`; usage is still recorded), 1 = its
 *   `token_balance_micro` is checked and drawn down. A flag beside the balance rather than a
 *   nullable balance because SQLite cannot drop a NOT NULL in place, and rebuilding `orgs` (which
 *   `api_keys` references) is not worth it; store/orgs-keys.ts shows the two as one nullable
 *   balance. Organizations that exist before this migration stay metered with the balance they
 *   have: nothing recorded whether it was set on purpose, and silently lifting an operator's limit
 *   is the worse mistake (`vitals-server orgs balance ORG --unmetered` clears it; docs/decisions.md).
 * - `worker_heartbeats`: one row per running worker, refreshed while it runs and deleted when it
 *   stops (batch/heartbeat.ts), so an API node can tell that jobs wait and no worker is alive.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('orgs')
    .addColumn('metered', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update orgs set metered = 1`.execute(db);

  await db.schema
    .createTable('worker_heartbeats')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('beat_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('worker_heartbeats').execute();
  await db.schema.alterTable('orgs').dropColumn('metered').execute();
}
