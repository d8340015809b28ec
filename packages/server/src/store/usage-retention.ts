/**
 * Usage-log retention (`VITALS_USAGE_LOG_RETENTION_DAYS`, docs/operating.md): rows older than the
 * retention are deleted in bounded batches. Log ids are time-ordered (`log_` + the creation
 * millisecond in 12 hex digits + random bytes; ids.ts), so "older than" is a range of the primary
 * key and the sweep needs no index of its own on the hot insert path. `time` is checked as well, so
 * a row is never deleted before its recorded time is past the cutoff.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Rows deleted per statement: each statement holds the write lock only briefly. */
export const RETENTION_BATCH = 5000;

/** The smallest time-ordered log id of millisecond `ms` (every id created at or after it sorts above). */
export function logIdFloor(ms: number): string {
  return `log_${Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12)}000000000000`;
}

/** Deletes usage-log rows recorded before `cutoffMs`; returns how many. */
export async function sweepUsageLog(db: Kysely<Database>, cutoffMs: number, batch = RETENTION_BATCH): Promise<number> {
  const bound = logIdFloor(cutoffMs);
  let total = 0;
  for (;;) {
    const res = await db
      .deleteFrom('usage_log')
      .where('id', 'in', (q) =>
        q
          .selectFrom('usage_log')
          .select('id')
          .where('id', '<', bound)
          .where('time', '<', cutoffMs)
          .orderBy('id')
          .limit(batch),
      )
      .executeTakeFirst();
    const n = Number(res.numDeletedRows);
    total += n;
    if (n < batch) return total;
    // Let other writers in between batches.
    await new Promise((r) => setImmediate(r));
  }
}

export const DAY_MS = 86_400_000;
