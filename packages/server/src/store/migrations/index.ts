/**
 * Numbered migrations, applied in name order by Kysely's Migrator. Add a file `NNN-name.ts` and
 * list it here; never edit a migration that has shipped.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as m001 from './001-core.js';
import * as m002 from './002-jobs.js';
import * as m003 from './003-batch.js';
import * as m004 from './004-nonces-without-rowid.js';
import * as m005 from './005-unmetered-orgs-and-worker-heartbeats.js';

export const MIGRATIONS: Record<string, Migration> = {
  '001-core': m001,
  '002-jobs': m002,
  '003-batch': m003,
  '004-nonces-without-rowid': m004,
  '005-unmetered-orgs-and-worker-heartbeats': m005,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
