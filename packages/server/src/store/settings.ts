/** Service-wide settings kept in the database, shared by every process of a deployment. */
import type { Kysely } from 'kysely';
import { randomHex } from '@vitals/protocol';
import type { Database } from './schema.js';

/**
 * The server secret signs session tokens and upload URLs. It is created once, atomically, so every
 * API node and worker on the same database agrees on it.
 */
export async function serverSecret(db: Kysely<Database>, configured?: string): Promise<string> {
  if (configured) return configured;
  await db
    .insertInto('settings')
    .values({ name: 'server_secret', value: randomHex(32) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('settings')
    .select('value')
    .where('name', '=', 'server_secret')
    .executeTakeFirstOrThrow();
  return row.value;
}
