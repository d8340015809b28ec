/**
 * A store that cannot answer, seen from the client: 503 service_unavailable with Retry-After and the
 * request id, one warning in the log that names no host, SQL or parameter, and nothing stored. The
 * failures are real (testing.ts `holdStoreWriteLock`): another connection holds the write lock, and
 * the app gives up waiting for it (SQLite busy_timeout → SQLITE_BUSY; PostgreSQL statement_timeout
 * → 57014). Runs on SQLite, and on PostgreSQL with VITALS_TEST_DATABASE_URL.
 */
import { describe, expect, test } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { holdStoreWriteLock } from '../src/testing.js';
import { countMeasurements, createWorld, goodMeasurement, json, type World } from './helpers.js';

const PG_URL = process.env.VITALS_TEST_DATABASE_URL;
/** A short statement timeout, so a write blocked by the lock fails in a quarter second on PostgreSQL. */
const ENV = { VITALS_DB_STATEMENT_TIMEOUT_MS: '250' };

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  reason?: string;
  route?: string;
  [k: string]: unknown;
}

async function worldWithLog(
  env: Record<string, string> = ENV,
): Promise<{ w: World; lines: string[]; logged(): LogLine[] }> {
  const lines: string[] = [];
  const w = await createWorld({ env, logger: { level: 'warn', stream: { write: (l: string) => void lines.push(l) } } });
  return { w, lines, logged: () => lines.map((l) => JSON.parse(l) as LogLine) };
}

const measurements = countMeasurements;

function expectUnavailable(res: LightMyRequestResponse): void {
  expect(res.statusCode).toBe(503);
  expect(json(res)).toEqual({
    ok: false,
    error: { code: 'service_unavailable', message: 'the service is temporarily unavailable; retry shortly' },
  });
  expect(res.headers['retry-after']).toBe('1');
  expect(String(res.headers['x-request-id'])).toMatch(/^req_[0-9a-f]{24}$/);
}

describe('the store holds no write for us', () => {
  test('POST /sdk/v1/measurements → 503 service_unavailable, Retry-After 1, nothing stored; 201 once the lock is gone', async () => {
    const { w } = await worldWithLog();
    try {
      const release = await holdStoreWriteLock(w.t);
      let res: LightMyRequestResponse;
      try {
        res = await w.call({
          method: 'POST',
          url: '/sdk/v1/measurements',
          body: goodMeasurement(),
          nonce: 'outage-nonce-1',
        });
      } finally {
        await release();
      }
      expectUnavailable(res);
      expect(await measurements(w)).toBe(0);
      // Nothing was spent either: the same call goes through now (a client retries with a new nonce anyway).
      w.clock.advance(1);
      const again = await w.call({
        method: 'POST',
        url: '/sdk/v1/measurements',
        body: goodMeasurement(),
        nonce: 'outage-nonce-1',
      });
      expect(again.statusCode).toBe(201);
      expect(await measurements(w)).toBe(1);
    } finally {
      await w.close();
    }
  });

  test('a route that spends its nonce first (GET /sdk/v1/auth/test) → 503 too; the CORS headers expose Retry-After', async () => {
    const { w } = await worldWithLog();
    try {
      const release = await holdStoreWriteLock(w.t);
      let res: LightMyRequestResponse;
      try {
        res = await w.call({ method: 'POST', url: '/sdk/v1/auth/test', headers: { origin: 'https://app.example' } });
      } finally {
        await release();
      }
      expectUnavailable(res);
      expect(String(res.headers['access-control-expose-headers'])).toMatch(/Retry-After/);
      w.clock.advance(1);
      expect((await w.call({ method: 'POST', url: '/sdk/v1/auth/test' })).statusCode).toBe(200);
    } finally {
      await w.close();
    }
  });

  test('one warning per request, with the request id and the reason, and no host, SQL or parameter', async () => {
    const { w, lines, logged } = await worldWithLog();
    try {
      const release = await holdStoreWriteLock(w.t);
      const sent: LightMyRequestResponse[] = [];
      try {
        for (const nonce of ['outage-log-nonce-1', 'outage-log-nonce-2']) {
          sent.push(
            await w.call({
              method: 'POST',
              url: '/sdk/v1/measurements',
              body: goodMeasurement({ userRef: 'patient-4711' }),
              nonce,
            }),
          );
          w.clock.advance(1);
        }
      } finally {
        await release();
      }
      for (const r of sent) expectUnavailable(r);
      const warnings = logged().filter((l) => l.level === 40);
      expect(warnings.map((l) => l.reqId)).toEqual(sent.map((r) => r.headers['x-request-id']));
      for (const l of warnings) {
        expect(l.msg).toBe('store unavailable: answered 503');
        expect(l.route).toBe('/sdk/v1/measurements');
        expect(l.reason).toBe(w.t.ctx.db.dialect === 'sqlite' ? 'SQLITE_BUSY' : '57014');
      }
      expect(logged().filter((l) => l.level >= 50)).toEqual([]);
      const text = lines.join('\n');
      for (const secret of [
        'outage-log-nonce',
        'patient-4711',
        'insert',
        'nonces',
        'select',
        w.key.secret,
        w.key.keyId,
      ]) {
        expect(text, secret).not.toContain(secret);
      }
      if (PG_URL) {
        const u = new URL(PG_URL);
        expect(text).not.toContain(u.host);
        expect(text).not.toContain(PG_URL);
      }
    } finally {
      await w.close();
    }
  });
});

describe.skipIf(!PG_URL)('PostgreSQL: writes past the batcher bound', () => {
  test('with VITALS_DB_MAX_QUEUED_WRITES=1, calls past the bound are refused at once (store_busy), the others time out (57014); all 503', async () => {
    const { w, logged } = await worldWithLog({ ...ENV, VITALS_DB_MAX_QUEUED_WRITES: '1' });
    try {
      // Warm the key cache, so every call below reaches the nonce batcher at about the same time.
      expect((await w.call({ method: 'POST', url: '/sdk/v1/auth/test' })).statusCode).toBe(200);
      const release = await holdStoreWriteLock(w.t);
      let results: LightMyRequestResponse[];
      try {
        results = await Promise.all(
          // More than two batches of 64 plus the one that may wait.
          Array.from({ length: 200 }, (_, i) =>
            w.call({ method: 'POST', url: '/sdk/v1/auth/test', nonce: `bound-nonce-${i}` }),
          ),
        );
      } finally {
        await release();
      }
      for (const r of results) expectUnavailable(r);
      const reasons = logged()
        .filter((l) => l.level === 40)
        .map((l) => l.reason);
      expect(reasons).toHaveLength(200);
      expect(reasons.filter((r) => r === 'store_busy').length).toBeGreaterThan(0);
      expect(reasons.filter((r) => r === '57014').length).toBeGreaterThan(0);
      expect(new Set(reasons)).toEqual(new Set(['store_busy', '57014']));
    } finally {
      await w.close();
    }
  });
});
