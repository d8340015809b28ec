/**
 * The store's contract (STYLE habit 5): one suite over the store verbs, looped over every adapter —
 * SQLite always, PostgreSQL when VITALS_TEST_DATABASE_URL is set (kysely loops its suite over its
 * dialects the same way). Values must come back with the same JS types on both: numbers not
 * bigint strings, 0/1 flags, exact text.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { Migrator, sql } from 'kysely';
import { newLogId, newMeasurementId, randomHex, ZERO_LOG_ID, sha256Hex } from '@vitals/protocol';
import { openDatabase, type DbHandle } from '../src/store/db.js';
import { migrateToLatest } from '../src/store/migrate.js';
import { migrationProvider } from '../src/store/migrations/index.js';
import {
  createKey,
  createOrg,
  drawDownTokenBalance,
  getKey,
  getOrg,
  setKeyStatus,
  setOrgTokenBalance,
} from '../src/store/orgs-keys.js';
import { spendNonce, sweepNonces } from '../src/store/nonces.js';
import { appendUsage, listUsage, usageLogRow, type UsageRow } from '../src/store/usage-log.js';
import {
  baselineRows,
  getMeasurement,
  insertMeasurement,
  listUserMeasurements,
  listUsers,
  measurementRow,
} from '../src/store/measurements.js';
import { addMonthUsage, getMonthUsage, monthOf } from '../src/store/metering.js';
import { serverSecret } from '../src/store/settings.js';
import type { Measurement } from '../src/domain/measurement.js';

interface Adapter {
  name: string;
  open(): Promise<{ db: DbHandle; cleanup(): Promise<void> }>;
}

const ADAPTERS: Adapter[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-store-'));
      const db = openDatabase({ sqlitePath: path.join(dir, 'vitals.db') });
      return {
        db,
        async cleanup() {
          await db.close();
          fs.rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
];
const PG_URL = process.env.VITALS_TEST_DATABASE_URL;
if (PG_URL) {
  ADAPTERS.push({
    name: 'postgres',
    async open() {
      const schema = `c_${randomHex(6)}`;
      const admin = openDatabase({ databaseUrl: PG_URL, poolSize: 1 });
      await admin.db.schema.createSchema(schema).execute();
      await admin.close();
      const db = openDatabase({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 4 });
      return {
        db,
        async cleanup() {
          await db.close();
          const a = openDatabase({ databaseUrl: PG_URL, poolSize: 1 });
          await a.db.schema.dropSchema(schema).cascade().execute();
          await a.close();
        },
      };
    },
  });
}

const T = Date.UTC(2026, 10, 1, 12);

function measurement(keyId: string, over: Partial<Measurement> = {}): Measurement {
  return {
    id: newMeasurementId(),
    keyId,
    requestId: `req_${randomHex(12)}`,
    origin: 'on_device',
    attested: false,
    source: 'web',
    createdAt: T,
    isComplete: true,
    quality: { level: 'good', score: 0.8, usable: true },
    cardiac: { heartRate: { value: 70, unit: 'bpm' } },
    ...over,
  } as Measurement;
}

function usage(over: Partial<UsageRow> = {}): UsageRow {
  return {
    id: newLogId(),
    time: T,
    endpoint: '/sdk/v1/auth/test',
    method: 'POST',
    status: 'success',
    latencyMs: 3,
    requestId: `req_${randomHex(12)}`,
    error: null,
    errorCode: null,
    qualityLevel: null,
    ...over,
  };
}

describe.each(ADAPTERS)('store contract: $name', (adapter) => {
  let h: { db: DbHandle; cleanup(): Promise<void> };
  const db = () => h.db.db;

  beforeEach(async () => {
    h = await adapter.open();
    await migrateToLatest(h.db.db);
  });
  afterEach(async () => {
    await h.cleanup();
  });

  test('migrations are idempotent: a second run applies nothing', async () => {
    expect(await migrateToLatest(db())).toEqual([]);
  });

  describe('orgs and keys', () => {
    test('an org round-trips with numeric balance and time', async () => {
      const org = await createOrg(db(), 'Acme', 12.345678, T);
      const got = await getOrg(db(), org.id);
      expect(got).toEqual({ id: org.id, name: 'Acme', tokenBalanceMicro: 12_345_678, createdAt: T });
      expect(typeof got!.createdAt).toBe('number');
    });

    test('a key round-trips; its secret is stored only as SHA-256', async () => {
      const org = await createOrg(db(), 'o', 0, T);
      const { key, secret } = await createKey(
        db(),
        {
          orgId: org.id,
          rateLimitPerMin: 30,
          quotaSecondsMonth: 3600,
          tokenQuotaMonthMicro: 5_000_000,
          expiresAt: T + 1,
          features: ['hrv', 'nonsense', 'bp'],
        },
        T,
      );
      const got = await getKey(db(), key.id);
      expect(got).toEqual({
        id: key.id,
        orgId: org.id,
        secretSha256: await sha256Hex(secret),
        status: 'active',
        mode: 'live',
        features: ['hrv', 'bp'],
        rateLimitPerMin: 30,
        quotaSecondsMonth: 3600,
        tokenQuotaMonthMicro: 5_000_000,
        expiresAt: T + 1,
        createdAt: T,
      });
      const row = await db().selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
      expect(Object.values(row)).not.toContain(secret);
    });

    test('optional key limits come back as null', async () => {
      const org = await createOrg(db(), 'o', 0, T);
      const { key } = await createKey(db(), { orgId: org.id }, T);
      expect(await getKey(db(), key.id)).toMatchObject({
        rateLimitPerMin: 0,
        quotaSecondsMonth: null,
        tokenQuotaMonthMicro: null,
        expiresAt: null,
      });
    });

    test('setKeyStatus flips status and reports unknown ids', async () => {
      const org = await createOrg(db(), 'o', 0, T);
      const { key } = await createKey(db(), { orgId: org.id }, T);
      expect(await setKeyStatus(db(), key.id, 'disabled')).toBe(true);
      expect((await getKey(db(), key.id))!.status).toBe('disabled');
      expect(await setKeyStatus(db(), 'key_nope', 'disabled')).toBe(false);
    });

    test('key ids are case-sensitive', async () => {
      const org = await createOrg(db(), 'o', 0, T);
      const { key } = await createKey(db(), { orgId: org.id }, T);
      expect(await getKey(db(), key.id.toUpperCase())).toBeUndefined();
    });
  });

  describe('nonces', () => {
    test('a nonce is spent once per key within its lifetime, then may be taken over', async () => {
      expect(await spendNonce(db(), 'k1', 'nonce-a', T, 600_000)).toBe(true);
      expect(await spendNonce(db(), 'k1', 'nonce-a', T + 599_999, 600_000)).toBe(false);
      expect(await spendNonce(db(), 'k2', 'nonce-a', T, 600_000)).toBe(true);
      expect(await spendNonce(db(), 'k1', 'NONCE-A', T, 600_000)).toBe(true);
      expect(await spendNonce(db(), 'k1', 'nonce-a', T + 600_000, 600_000)).toBe(true);
      expect(await spendNonce(db(), 'k1', 'nonce-a', T + 600_001, 600_000)).toBe(false);
    });

    test('concurrent spends of one nonce: exactly one wins', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, () => spendNonce(db(), 'k', 'race-nonce', T, 600_000)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    test('sweep removes only expired nonces', async () => {
      await spendNonce(db(), 'k', 'old-nonce', T, 1000);
      await spendNonce(db(), 'k', 'new-nonce', T, 5000);
      expect(await sweepNonces(db(), T + 1000)).toBe(1);
      expect(await spendNonce(db(), 'k', 'new-nonce', T + 1000, 5000)).toBe(false);
    });

    test('migration 004 keeps every spent nonce (a replay across the upgrade is refused); on SQLite the table is clustered on its key', async () => {
      const fresh = await adapter.open();
      try {
        const fdb = fresh.db.db;
        const migrated = await new Migrator({ db: fdb, provider: migrationProvider }).migrateTo('003-batch');
        expect(migrated.error).toBeUndefined();
        expect(await spendNonce(fdb, 'k', 'spent-before', T, 600_000)).toBe(true);
        expect(await spendNonce(fdb, 'k', 'expired-before', T - 700_000, 600_000)).toBe(true);
        expect(await migrateToLatest(fdb)).toContain('004-nonces-without-rowid');
        expect(await spendNonce(fdb, 'k', 'spent-before', T + 1, 600_000)).toBe(false);
        expect(await spendNonce(fdb, 'k', 'expired-before', T, 600_000)).toBe(true);
        expect(await spendNonce(fdb, 'k', 'fresh-after', T, 600_000)).toBe(true);
        expect(await sweepNonces(fdb, T + 600_001)).toBe(3);
        if (adapter.name === 'sqlite') {
          const { rows } = await sql<{
            name: string;
            sql: string;
          }>`select name, sql from sqlite_master where tbl_name = 'nonces' order by name`.execute(fdb);
          // No separate index for the key: the rows are stored in its B-tree (a rowid table also had sqlite_autoindex_nonces_1).
          expect(rows.map((r) => r.name)).toEqual(['nonces', 'nonces_expiry']);
          expect(rows[0].sql).toMatch(/without rowid\s*$/i);
        }
      } finally {
        await fresh.cleanup();
      }
    });
  });

  describe('token balances (CLARIFICATIONS 28: null = unmetered)', () => {
    test('an org created without a balance is unmetered; setting one (0 included) and clearing it round-trip', async () => {
      const org = await createOrg(db(), 'self-hosted', null, T);
      expect(org.tokenBalanceMicro).toBeNull();
      expect(await getOrg(db(), org.id)).toEqual({
        id: org.id,
        name: 'self-hosted',
        tokenBalanceMicro: null,
        createdAt: T,
      });
      expect(await setOrgTokenBalance(db(), org.id, 0)).toBe(true);
      expect((await getOrg(db(), org.id))!.tokenBalanceMicro).toBe(0);
      expect(await setOrgTokenBalance(db(), org.id, 2_500_000)).toBe(true);
      expect((await getOrg(db(), org.id))!.tokenBalanceMicro).toBe(2_500_000);
      expect(await setOrgTokenBalance(db(), org.id, null)).toBe(true);
      expect((await getOrg(db(), org.id))!.tokenBalanceMicro).toBeNull();
      expect(await setOrgTokenBalance(db(), 'org_nope', 1)).toBe(false);
    });

    test('a settled cost draws from a metered balance only', async () => {
      const metered = await createOrg(db(), 'm', 1, T);
      const unmetered = await createOrg(db(), 'u', null, T);
      await drawDownTokenBalance(db(), metered.id, 250_000);
      await drawDownTokenBalance(db(), unmetered.id, 250_000);
      expect((await getOrg(db(), metered.id))!.tokenBalanceMicro).toBe(750_000);
      expect((await getOrg(db(), unmetered.id))!.tokenBalanceMicro).toBeNull();
      // Clearing and setting again starts from the amount set, not from what was drawn meanwhile.
      await setOrgTokenBalance(db(), unmetered.id, 3_000_000);
      expect((await getOrg(db(), unmetered.id))!.tokenBalanceMicro).toBe(3_000_000);
    });

    test('migration 005 keeps organizations that existed before it metered, with their balance', async () => {
      const fresh = await adapter.open();
      try {
        const fdb = fresh.db.db;
        const before = await new Migrator({ db: fdb, provider: migrationProvider }).migrateTo(
          '004-nonces-without-rowid',
        );
        expect(before.error).toBeUndefined();
        await sql`insert into orgs (id, name, token_balance_micro, created_at) values ('org_a', 'a', 0, ${T}), ('org_b', 'b', 7000000, ${T})`.execute(
          fdb,
        );
        expect(await migrateToLatest(fdb)).toContain('005-unmetered-orgs-and-worker-heartbeats');
        expect((await getOrg(fdb, 'org_a'))!.tokenBalanceMicro).toBe(0);
        expect((await getOrg(fdb, 'org_b'))!.tokenBalanceMicro).toBe(7_000_000);
        expect((await createOrg(fdb, 'new', null, T)).tokenBalanceMicro).toBeNull();
      } finally {
        await fresh.cleanup();
      }
    });
  });

  describe('usage log', () => {
    test('rows round-trip with every field and numeric time/latency', async () => {
      const row = usage({
        status: 'unauthorized',
        latencyMs: null,
        error: 'bad',
        errorCode: 'invalid_signature',
        qualityLevel: null,
      });
      await appendUsage(db(), 'k', row);
      const [got] = await listUsage(db(), 'k', { time: 0, id: ZERO_LOG_ID, inclusiveTime: true }, 10);
      expect(got).toEqual(row);
    });

    test('keyset: oldest first over (time, id), strictly after the cursor, inclusive from a time', async () => {
      const rows = [
        usage({ time: T, id: 'log_000000000000000000000002' }),
        usage({ time: T, id: 'log_000000000000000000000001' }),
        usage({ time: T + 1, id: 'log_000000000000000000000000' }),
        usage({ time: T - 1 }),
      ];
      for (const r of rows) await appendUsage(db(), 'k', r);
      await appendUsage(db(), 'other', usage({ time: T }));
      const all = await listUsage(db(), 'k', { time: 0, id: ZERO_LOG_ID, inclusiveTime: true }, 10);
      expect(all.map((r) => [r.time, r.id])).toEqual([
        [T - 1, rows[3].id],
        [T, 'log_000000000000000000000001'],
        [T, 'log_000000000000000000000002'],
        [T + 1, 'log_000000000000000000000000'],
      ]);
      const after = await listUsage(
        db(),
        'k',
        { time: T, id: 'log_000000000000000000000001', inclusiveTime: false },
        10,
      );
      expect(after.map((r) => r.id)).toEqual(['log_000000000000000000000002', 'log_000000000000000000000000']);
      const since = await listUsage(db(), 'k', { time: T, id: ZERO_LOG_ID, inclusiveTime: true }, 2);
      expect(since.map((r) => r.id)).toEqual(['log_000000000000000000000001', 'log_000000000000000000000002']);
    });

    test('rows with no key (missing credentials) are stored with key null', async () => {
      await appendUsage(db(), null, usage({ status: 'unauthorized', errorCode: 'missing_credentials' }));
      const n = await db().selectFrom('usage_log').select('key_id').where('key_id', 'is', null).execute();
      expect(n).toHaveLength(1);
    });
  });

  describe('measurements', () => {
    test('a measurement round-trips with and without raw; another key gets nothing', async () => {
      const m = measurement('k1', { userRef: 'alice' });
      const raw = { rrIntervalsMs: [800], ppgSignal: [0.5], sampleRateHz: 30 };
      await insertMeasurement(db(), m, raw, 'org', T);
      expect(await getMeasurement(db(), 'k1', m.id)).toEqual({ doc: m, raw });
      expect(await getMeasurement(db(), 'k2', m.id)).toBeUndefined();
      const m2 = measurement('k1');
      await insertMeasurement(db(), m2, null, 'org', T);
      expect((await getMeasurement(db(), 'k1', m2.id))!.raw).toBeNull();
    });

    test('listUsers: most recent first, numeric summary, scoped to the key, paged', async () => {
      await insertMeasurement(
        db(),
        measurement('k', { userRef: 'a', quality: { level: 'good', score: 0.9, usable: true } }),
        null,
        'o',
        T,
      );
      await insertMeasurement(db(), measurement('k', { userRef: 'b' }), null, 'o', T + 10);
      await insertMeasurement(
        db(),
        measurement('k', { userRef: 'a', quality: { level: 'fair', score: 0.4, usable: true } }),
        null,
        'o',
        T + 20,
      );
      await insertMeasurement(db(), measurement('k', { userRef: 'B' }), null, 'o', T + 5);
      await insertMeasurement(db(), measurement('other', { userRef: 'z' }), null, 'o', T + 30);
      await insertMeasurement(db(), measurement('k'), null, 'o', T + 40);
      const { items, total } = await listUsers(db(), 'k', 1, 10);
      expect(total).toBe(3);
      expect(items.map((u) => u.userRef)).toEqual(['a', 'b', 'B']);
      expect(items[0]).toEqual({
        userRef: 'a',
        measurements: 2,
        firstSeenAt: T,
        lastSeenAt: T + 20,
        avgQuality: expect.closeTo(0.65, 9),
      });
      for (const v of [items[0].measurements, items[0].firstSeenAt, items[0].avgQuality])
        expect(typeof v).toBe('number');
      expect((await listUsers(db(), 'k', 2, 2)).items.map((u) => u.userRef)).toEqual(['B']);
    });

    test('listUserMeasurements: newest first, from/to inclusive, numeric total, userRef case-sensitive', async () => {
      const ms = [0, 1, 2, 3].map((i) => measurement('k', { userRef: 'alice', createdAt: T + i }));
      for (const [i, m] of ms.entries()) await insertMeasurement(db(), m, null, 'o', T + i);
      await insertMeasurement(db(), measurement('k', { userRef: 'Alice' }), null, 'o', T);
      const res = await listUserMeasurements(db(), 'k', 'alice', { page: 1, perPage: 10, from: T + 1, to: T + 2 });
      expect(res.items.map((m) => m.id)).toEqual([ms[2].id, ms[1].id]);
      expect(res.total).toBe(2);
      expect(typeof res.total).toBe('number');
      expect((await listUserMeasurements(db(), 'k', 'Alice', { page: 1, perPage: 10 })).total).toBe(1);
    });

    test('baselineRows: usable (complete, good/fair) in the window, newest first, capped, numbers not strings', async () => {
      const put = (at: number, over: Partial<Measurement>) =>
        insertMeasurement(db(), measurement('k', { userRef: 'u', ...over }), null, 'o', at);
      await put(T - 100, { cardiac: { heartRate: { value: 50, unit: 'bpm' } } }); // before the window
      await put(T, { cardiac: { heartRate: { value: 60.5, unit: 'bpm' } } });
      await put(T + 1, {
        cardiac: { heartRate: { value: 61, unit: 'bpm' } },
        quality: { level: 'fair', score: 0.5, usable: true },
      });
      await put(T + 2, { cardiac: { heartRate: { value: 62, unit: 'bpm' } }, isComplete: false });
      await put(T + 3, { cardiac: { heartRate: null }, quality: { level: 'poor', score: 0.1, usable: false } });
      await put(T + 4, { cardiac: { heartRate: { value: 63, unit: 'bpm' } } });
      const rows = await baselineRows(db(), 'k', 'u', T, 200);
      expect(rows.map((r) => r.heart_rate_bpm)).toEqual([63, 61, 60.5]);
      expect(rows[0].rmssd_ms).toBeNull();
      expect((await baselineRows(db(), 'k', 'u', T, 2)).map((r) => r.heart_rate_bpm)).toEqual([63, 61]);
    });
  });

  describe('write units (one transaction per signed write)', () => {
    const count = async (table: 'measurements' | 'usage_log') =>
      Number(
        (
          await db()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    test('a unit that throws after writing leaves no half-written rows; its caller gets the error', async () => {
      const m = measurement('k');
      const failing = h.db.write(async (tx) => {
        await insertMeasurement(tx, m, null, 'o', T);
        await appendUsage(tx, 'k', usage({ endpoint: '/sdk/v1/measurements' }));
        throw new Error('boom after two rows');
      });
      await expect(failing).rejects.toThrow('boom after two rows');
      expect(await getMeasurement(db(), 'k', m.id)).toBeUndefined();
      expect(await count('usage_log')).toBe(0);
    });

    test('concurrent units: a failing one rolls back alone, the others commit before their promises settle', async () => {
      const ms = Array.from({ length: 6 }, () => measurement('k'));
      const results = await Promise.allSettled(
        ms.map((m, i) =>
          h.db.write(async (tx) => {
            await insertMeasurement(tx, m, null, 'o', T + i);
            await appendUsage(tx, 'k', usage({ time: T + i }));
            if (i === 2) throw new Error('unit 2 fails');
            return m.id;
          }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      for (const [i, m] of ms.entries()) expect(Boolean(await getMeasurement(db(), 'k', m.id))).toBe(i !== 2);
      expect(await count('measurements')).toBe(5);
      expect(await count('usage_log')).toBe(5);
    });

    test('a unit that violates a constraint is rolled back alone (duplicate id)', async () => {
      const m = measurement('k');
      await insertMeasurement(db(), m, null, 'o', T);
      const dup = h.db.write(async (tx) => {
        await appendUsage(tx, 'k', usage());
        await insertMeasurement(tx, m, null, 'o', T);
      });
      const ok = h.db.write((tx) => appendUsage(tx, 'k', usage()));
      await expect(dup).rejects.toThrow();
      await ok;
      expect(await count('measurements')).toBe(1);
      expect(await count('usage_log')).toBe(1);
    });

    test('insertAll stores rows of several tables together', async () => {
      const m = measurement('k');
      const u = usage({ endpoint: '/sdk/v1/measurements', qualityLevel: 'good' });
      await h.db.insertAll([
        { table: 'measurements', values: measurementRow(m, null, 'o', T) },
        { table: 'usage_log', values: usageLogRow('k', u) },
      ]);
      expect((await getMeasurement(db(), 'k', m.id))?.doc).toEqual(m);
      expect(await listUsage(db(), 'k', { time: 0, id: ZERO_LOG_ID, inclusiveTime: true }, 10)).toEqual([u]);
    });

    test('insertAll is all or none: a failing row leaves none of the others', async () => {
      const taken = usage();
      await appendUsage(db(), 'k', taken);
      const m = measurement('k');
      const both = h.db.insertAll([
        { table: 'measurements', values: measurementRow(m, null, 'o', T) },
        { table: 'usage_log', values: usageLogRow('k', { ...usage(), id: taken.id }) },
      ]);
      await expect(both).rejects.toThrow();
      expect(await getMeasurement(db(), 'k', m.id)).toBeUndefined();
      expect(await count('usage_log')).toBe(1);
      expect(await count('measurements')).toBe(0);
    });

    test('spendNonce (batched on PostgreSQL): one of concurrent spends wins, an expired nonce is taken over', async () => {
      const spend = (nonce: string, now = T, ttlMs = 600_000) => h.db.spendNonce({ keyId: 'k', nonce, now, ttlMs });
      const results = await Promise.all([
        ...Array.from({ length: 6 }, () => spend('same-nonce')),
        spend('other-nonce'),
      ]);
      expect(results.filter(Boolean)).toHaveLength(2);
      expect(results[6]).toBe(true);
      expect(await spend('same-nonce', T + 599_999)).toBe(false);
      expect(await spend('same-nonce', T + 600_000)).toBe(true);
      expect(await spend('same-nonce', T + 600_001)).toBe(false);
    });

    const guarded = (nonce: string, over: { now?: number; usageId?: string } = {}) => {
      const m = measurement('k');
      const u = {
        ...usage({ endpoint: '/sdk/v1/measurements', qualityLevel: 'good' }),
        ...(over.usageId ? { id: over.usageId } : {}),
      };
      const rows = [
        { table: 'measurements' as const, values: measurementRow(m, null, 'o', T) },
        { table: 'usage_log' as const, values: usageLogRow('k', u) },
      ];
      return {
        m,
        u,
        run: () => h.db.spendNonceAndInsert({ keyId: 'k', nonce, now: over.now ?? T, ttlMs: 600_000 }, rows),
      };
    };

    test('spendNonceAndInsert stores the nonce and its rows together; a spent nonce stores nothing', async () => {
      const a = guarded('guard-1');
      expect(await a.run()).toBe(true);
      expect((await getMeasurement(db(), 'k', a.m.id))?.doc).toEqual(a.m);
      expect(await listUsage(db(), 'k', { time: 0, id: ZERO_LOG_ID, inclusiveTime: true }, 10)).toEqual([a.u]);
      const replay = guarded('guard-1', { now: T + 599_999 });
      expect(await replay.run()).toBe(false);
      expect(await getMeasurement(db(), 'k', replay.m.id)).toBeUndefined();
      expect(await count('usage_log')).toBe(1);
      // Expired: taken over like spendNonce does.
      expect(await guarded('guard-1', { now: T + 600_000 }).run()).toBe(true);
      expect(await count('measurements')).toBe(2);
    });

    test('spendNonceAndInsert: a failing row stores nothing and leaves the nonce unspent; calls alongside it are stored', async () => {
      const taken = usage();
      await appendUsage(db(), 'k', taken);
      const calls = [
        guarded('g-a'),
        guarded('g-bad', { usageId: taken.id }),
        guarded('g-b'),
        guarded('g-a'),
        guarded('g-c'),
      ];
      const results = await Promise.allSettled(calls.map((c) => c.run()));
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected'))).toEqual([
        true,
        'rejected',
        true,
        false,
        true,
      ]);
      expect(await getMeasurement(db(), 'k', calls[1].m.id)).toBeUndefined();
      expect(await getMeasurement(db(), 'k', calls[3].m.id)).toBeUndefined();
      expect(await count('measurements')).toBe(3);
      expect(await count('usage_log')).toBe(4);
      expect(await h.db.spendNonce({ keyId: 'k', nonce: 'g-bad', now: T, ttlMs: 600_000 })).toBe(true);
    });

    test('spendNonceAndInsert: of concurrent calls with one nonce exactly one is stored', async () => {
      const calls = Array.from({ length: 8 }, () => guarded('race-guard'));
      const results = await Promise.all(calls.map((c) => c.run()));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await count('measurements')).toBe(1);
      expect(await count('usage_log')).toBe(1);
    });

    test('nonces spent through single-statement units: exactly one of concurrent spends wins', async () => {
      const spend = () => h.db.write((tx) => spendNonce(tx, 'k', 'unit-nonce', T, 600_000), { single: true });
      const results = await Promise.all(Array.from({ length: 8 }, spend));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await spend()).toBe(false);
    });
  });

  describe('metering and settings', () => {
    test('month usage accumulates atomically and reads back as numbers', async () => {
      const month = monthOf(T);
      expect(month).toBe('2026-11');
      expect(await getMonthUsage(db(), 'k', month)).toEqual({ cloudSeconds: 0, tokensMicro: 0 });
      await Promise.all([
        addMonthUsage(db(), 'k', month, 10.5, 1000),
        addMonthUsage(db(), 'k', month, 20, 2000),
        addMonthUsage(db(), 'k', month, 1, 3),
      ]);
      expect(await getMonthUsage(db(), 'k', month)).toEqual({ cloudSeconds: 31.5, tokensMicro: 3003 });
      expect(await getMonthUsage(db(), 'k', '2026-12')).toEqual({ cloudSeconds: 0, tokensMicro: 0 });
    });

    test('the server secret is created once and shared', async () => {
      const [a, b] = await Promise.all([serverSecret(db()), serverSecret(db())]);
      expect(a).toMatch(/^[0-9a-f]{64}$/);
      expect(b).toBe(a);
      expect(await serverSecret(db())).toBe(a);
      expect(await serverSecret(db(), 'configured')).toBe('configured');
    });
  });
});
