/**
 * PostgreSQL only: a pooled connection closed under the server (database restart, failover, an
 * administrator's pg_terminate_backend) must not crash the process; the next query reconnects.
 */
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openDatabase } from '../src/store/db.js';

const PG_URL = process.env.VITALS_TEST_DATABASE_URL;

describe.skipIf(!PG_URL)('PostgreSQL pool', () => {
  it('survives an idle connection being terminated and reconnects on the next query', async () => {
    const db = openDatabase({ databaseUrl: PG_URL!, poolSize: 1 });
    const admin = openDatabase({ databaseUrl: PG_URL!, poolSize: 1 });
    try {
      const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db.db)).rows[0].pid;
      // The client is idle in the pool now; kill its backend from another connection.
      const killed = (await sql<{ ok: boolean }>`select pg_terminate_backend(${pid}) as ok`.execute(admin.db)).rows[0]
        .ok;
      expect(killed).toBe(true);
      // Give pg the moment it needs to notice the closed socket and emit the pool's 'error' event
      // (uncaught, it would fail this run).
      await new Promise((r) => setTimeout(r, 200));
      const again = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db.db)).rows[0].pid;
      expect(again).not.toBe(pid);
    } finally {
      await db.close();
      await admin.close();
    }
  });
});
