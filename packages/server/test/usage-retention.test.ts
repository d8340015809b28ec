/**
 * Usage-log retention (VITALS_USAGE_LOG_RETENTION_DAYS; store/usage-retention.ts, server.ts): rows
 * recorded before the cutoff are deleted in bounded batches, newer ones and other tables are kept,
 * 0 keeps everything, and the server runs the sweep at start and hourly.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildServer, USAGE_RETENTION_INTERVAL_MS } from '../src/server.js';
import { closeContext, createContext } from '../src/deps.js';
import { openTestDatabase } from '../src/testing.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { ManualClock } from '../src/clock.js';
import { appendUsage, type UsageRow } from '../src/store/usage-log.js';
import { DAY_MS, logIdFloor, sweepUsageLog } from '../src/store/usage-retention.js';
import { newLogId } from '../src/ids.js';
import { migrateToLatest } from '../src/store/migrate.js';

afterEach(() => {
  vi.useRealTimers();
});

let seq = 0;
/** A row recorded at `time` whose id was created at `idMs` (normally the same moment). */
function row(time: number, idMs = time): UsageRow {
  const suffix = (++seq).toString(16).padStart(12, '0');
  return {
    id: `log_${idMs.toString(16).padStart(12, '0')}${suffix}`,
    time,
    endpoint: '/sdk/v1/measurements',
    method: 'POST',
    status: 'success',
    latencyMs: 3,
    requestId: `req-${seq}`,
    error: null,
    errorCode: null,
    qualityLevel: null,
  };
}

describe('logIdFloor', () => {
  it('sorts below every id created at or after its millisecond and above earlier ones', () => {
    const now = Date.now();
    expect(newLogId() >= logIdFloor(now)).toBe(true);
    expect(logIdFloor(now - 1) < logIdFloor(now)).toBe(true);
    expect(row(now - 1).id < logIdFloor(now)).toBe(true);
    expect(logIdFloor(now)).toMatch(/^log_[0-9a-f]{24}$/);
  });
});

describe('sweepUsageLog', () => {
  it('deletes rows recorded before the cutoff, in batches, for every key, and keeps the rest', async () => {
    const store = await openTestDatabase();
    const db = store.db.db;
    await migrateToLatest(db);
    try {
      const now = Date.UTC(2026, 10, 23);
      const cutoff = now - 30 * DAY_MS;
      const old = [
        row(cutoff - 5 * DAY_MS),
        row(cutoff - 1),
        row(cutoff - DAY_MS),
        row(cutoff - 2 * DAY_MS),
        row(cutoff - 3),
      ];
      const kept = [row(cutoff), row(now), row(cutoff + 1)];
      // An id older than the cutoff but a recorded time after it (clock skew between processes): kept.
      const skewed = row(cutoff + 10, cutoff - 10);
      for (const [i, r] of old.entries()) await appendUsage(db, i % 2 ? 'key_a' : null, r);
      for (const r of [...kept, skewed]) await appendUsage(db, 'key_b', r);
      expect(await sweepUsageLog(db, cutoff, 2)).toBe(old.length);
      const left = (await db.selectFrom('usage_log').select('id').orderBy('id').execute()).map((r) => r.id);
      expect(left).toEqual([...kept, skewed].map((r) => r.id).sort());
      expect(await sweepUsageLog(db, cutoff, 2)).toBe(0);
    } finally {
      await store.cleanup();
    }
  });
});

describe('VITALS_USAGE_LOG_RETENTION_DAYS', () => {
  it('defaults to 0 (keep every row) and takes whole days', () => {
    expect(loadConfig({}).usageLogRetentionDays).toBe(0);
    expect(loadConfig({ VITALS_USAGE_LOG_RETENTION_DAYS: '90' }).usageLogRetentionDays).toBe(90);
    expect(loadConfig({ VITALS_USAGE_LOG_RETENTION_DAYS: '0' }).usageLogRetentionDays).toBe(0);
    for (const bad of ['-1', '1.5', 'ninety', '40000']) {
      expect(() => loadConfig({ VITALS_USAGE_LOG_RETENTION_DAYS: bad }), bad).toThrow(ConfigError);
    }
  });

  it.each([
    [30, 'deletes what is older than the retention at start and hourly'],
    [0, 'keeps everything when 0'],
  ])('the server with %i days %s', async (days) => {
    const store = await openTestDatabase();
    const clock = new ManualClock(Date.now());
    const env = { VITALS_DATA_DIR: store.dataDir, VITALS_USAGE_LOG_RETENTION_DAYS: String(days) };
    const ctx = await createContext(loadConfig(env), { clock, db: store.db });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { app } = await buildServer(ctx);
    const db = store.db.db;
    const count = async (): Promise<number> =>
      Number(
        (
          await db
            .selectFrom('usage_log')
            .select((e) => e.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    try {
      await appendUsage(db, 'key_a', row(clock.now() - 31 * DAY_MS));
      await appendUsage(db, 'key_a', row(clock.now() - 29 * DAY_MS));
      vi.advanceTimersByTime(1000);
      if (days === 0) {
        await new Promise((r) => setImmediate(r));
        expect(await count()).toBe(2);
        return;
      }
      await vi.waitFor(async () => expect(await count()).toBe(1));
      // Two days later the second row has aged out; the hourly sweep removes it.
      clock.advance(2 * DAY_MS);
      vi.advanceTimersByTime(USAGE_RETENTION_INTERVAL_MS);
      await vi.waitFor(async () => expect(await count()).toBe(0));
    } finally {
      vi.useRealTimers();
      await app.close();
      await closeContext(ctx).catch(() => undefined);
      await store.cleanup();
    }
  });
});
