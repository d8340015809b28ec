/**
 * Console Usage, End users, Billing and Overview (issue 16): happy paths, filters, errors and
 * another organization's ids (plain 404, never its data). Runs on SQLite and PostgreSQL.
 */
import { describe, expect } from 'vitest';
import { createConsoleWorld, json, PASSWORD, test, type ConsoleWorld } from './console-world.js';
import { goodMeasurement, poorMeasurement } from './helpers.js';
import { addMonthUsage } from '../src/store/metering.js';
import { setTokenBalance } from '../src/domain/balance.js';
import type { TestKey } from '../src/testing.js';

const RAW = { rrIntervalsMs: [800, 810, 790], ppgSignal: [0.1, 0.2, 0.15], sampleRateHz: 30 };
const DAY = 86_400_000;

async function measure(cw: ConsoleWorld, body: Record<string, unknown>, key?: TestKey, query = ''): Promise<string> {
  const res = await cw.call({ method: 'POST', url: `/sdk/v1/measurements${query}`, body, key });
  if (res.statusCode !== 201) throw new Error(res.body);
  return json(res).data.id;
}

describe('Usage', () => {
  test('newest first with keyId, filtered by status, errorCode and time; pages back; tails forward', async ({ cw }) => {
    const t0 = cw.clock.now();
    expect((await cw.call({ method: 'POST', url: '/sdk/v1/auth/test' })).statusCode).toBe(200);
    cw.clock.advance(1000);
    expect((await cw.call({ method: 'POST', url: '/sdk/v1/auth/test', signSecret: 'sk_wrong' })).statusCode).toBe(401);
    cw.clock.advance(1000);
    expect((await cw.call({ method: 'POST', url: '/sdk/v1/auth/test' })).statusCode).toBe(200);

    const page = json(await cw.api({ url: '/api/v1/usage' })).data;
    expect(page.items.map((r: { time: number }) => r.time)).toEqual([t0 + 2000, t0 + 1000, t0]);
    expect(page.items.every((r: { keyId: string }) => r.keyId === cw.key.keyId)).toBe(true);
    expect(page.items[1]).toMatchObject({
      status: 'unauthorized',
      errorCode: 'invalid_signature',
      endpoint: '/sdk/v1/auth/test',
      method: 'POST',
    });
    expect(page.nextCursor).toBeNull();
    expect(page.tailCursor).toBe(`${t0 + 2000}.${page.items[0].id}`);

    const only = async (q: string) => json(await cw.api({ url: `/api/v1/usage?${q}` })).data.items;
    expect(await only('status=unauthorized')).toHaveLength(1);
    expect(await only('errorCode=invalid_signature')).toHaveLength(1);
    expect(await only('status=rate_limited')).toHaveLength(0);
    expect(await only(`from=${t0 + 500}&to=${t0 + 1500}`)).toHaveLength(1);
    expect(await only(`keyId=${cw.key.keyId}`)).toHaveLength(3);

    const first = json(await cw.api({ url: '/api/v1/usage?limit=2' })).data;
    expect(first.items).toHaveLength(2);
    const older = json(await cw.api({ url: `/api/v1/usage?limit=2&before=${first.nextCursor}` })).data;
    expect(older.items.map((r: { time: number }) => r.time)).toEqual([t0]);
    expect(older.nextCursor).toBeNull();

    const idle = json(await cw.api({ url: `/api/v1/usage?after=${page.tailCursor}` })).data;
    expect(idle).toMatchObject({ items: [], tailCursor: page.tailCursor });
    cw.clock.advance(1000);
    await cw.call({ method: 'POST', url: '/sdk/v1/auth/test' });
    await cw.call({ method: 'POST', url: '/sdk/v1/auth/test' });
    const tail = json(await cw.api({ url: `/api/v1/usage?after=${page.tailCursor}` })).data;
    expect(tail.items).toHaveLength(2);
    expect(tail.items[0].time).toBe(t0 + 3000);
    expect(tail.tailCursor).toBe(`${tail.items[1].time}.${tail.items[1].id}`);
  });

  test("another organization's rows are invisible; its keyId is a plain 404", async ({ cw }) => {
    const other = await cw.otherOrg();
    await cw.call({ method: 'POST', url: '/sdk/v1/auth/test', key: other.key });
    await cw.call({ method: 'POST', url: '/sdk/v1/auth/test' });
    const items = json(await cw.api({ url: '/api/v1/usage' })).data.items;
    expect(items.map((r: { keyId: string }) => r.keyId)).toEqual([cw.key.keyId]);
    const res = await cw.api({ url: `/api/v1/usage?keyId=${other.key.keyId}` });
    expect(res.statusCode).toBe(404);
    expect(json(res).error.code).toBe('not_found');
  });

  test('bad cursors and filters are 400', async ({ cw }) => {
    for (const q of [
      'before=x',
      'after=1.log_zz',
      'status=maybe',
      'limit=201',
      'from=-1',
      `before=1.log_${'0'.repeat(24)}&after=1.log_${'0'.repeat(24)}`,
    ]) {
      const res = await cw.api({ url: `/api/v1/usage?${q}` });
      expect(res.statusCode, q).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
    }
  });
});

describe('End users', () => {
  test('the list, a history, the baseline and a measurement with raw PPG and assessment', async ({ cw }) => {
    const first = await measure(cw, goodMeasurement({ userRef: 'ada' }));
    cw.clock.advance(60_000);
    await measure(cw, goodMeasurement({ userRef: 'bob' }));
    cw.clock.advance(60_000);
    const withRaw = await measure(cw, goodMeasurement({ userRef: 'ada', raw: RAW }), undefined, '?advanced=true');

    const users = json(await cw.api({ url: '/api/v1/users' })).data;
    expect(users).toMatchObject({ total: 2, page: 1, perPage: 20 });
    expect(users.items.map((u: { userRef: string }) => u.userRef)).toEqual(['ada', 'bob']);
    expect(users.items[0]).toMatchObject({ keyId: cw.key.keyId, measurements: 2, avgQuality: 0.9 });
    expect(json(await cw.api({ url: `/api/v1/users?keyId=${cw.key.keyId}&perPage=1` })).data.items).toHaveLength(1);

    const history = json(await cw.api({ url: `/api/v1/users/${cw.key.keyId}/ada/measurements` })).data;
    expect(history.total).toBe(2);
    expect(history.items.map((m: { id: string }) => m.id)).toEqual([withRaw, first]);
    expect(history.items[0]).not.toHaveProperty('raw');

    const baseline = await cw.api({ url: `/api/v1/users/${cw.key.keyId}/ada/baseline` });
    expect(baseline.statusCode).toBe(200);
    expect(json(baseline).data).toMatchObject({ userRef: 'ada', sampleCount: 2 });

    const detail = json(await cw.api({ url: `/api/v1/measurements/${withRaw}` })).data;
    expect(detail).toMatchObject({ id: withRaw, userRef: 'ada', raw: RAW, quality: { level: 'good' } });
    expect(detail.assessment).toBeDefined();
    expect(json(await cw.api({ url: `/api/v1/measurements/${first}` })).data).not.toHaveProperty('raw');
  });

  test("another organization's user, key and measurement are a plain 404; its users are not listed", async ({ cw }) => {
    const other = await cw.otherOrg();
    const theirs = await measure(cw, goodMeasurement({ userRef: 'eve' }), other.key);
    await measure(cw, goodMeasurement({ userRef: 'ada' }));
    const unknownKey = 'key_000000000000000000000000';
    // Each foreign id answers exactly as an id that never existed.
    for (const [foreign, unknown] of [
      [`/api/v1/measurements/${theirs}`, '/api/v1/measurements/meas_000000000000000000000000'],
      [`/api/v1/users/${other.key.keyId}/eve/measurements`, `/api/v1/users/${unknownKey}/eve/measurements`],
      [`/api/v1/users/${other.key.keyId}/eve/baseline`, `/api/v1/users/${unknownKey}/eve/baseline`],
      [`/api/v1/users?keyId=${other.key.keyId}`, `/api/v1/users?keyId=${unknownKey}`],
    ]) {
      const res = await cw.api({ url: foreign });
      expect(res.statusCode, foreign).toBe(404);
      expect(json(res).error.code).toBe('not_found');
      expect(json(res)).toEqual(json(await cw.api({ url: unknown })));
    }
    expect(json(await cw.api({ url: '/api/v1/users' })).data.items.map((u: { userRef: string }) => u.userRef)).toEqual([
      'ada',
    ]);
  });

  test('a malformed userRef or page is 400', async ({ cw }) => {
    for (const url of [
      `/api/v1/users/${cw.key.keyId}/${'x'.repeat(65)}/measurements`,
      `/api/v1/users/${cw.key.keyId}/a%20b/baseline`,
      '/api/v1/users?perPage=101',
      '/api/v1/users?keyId=nokey',
    ]) {
      const res = await cw.api({ url });
      expect(res.statusCode, url).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
    }
  });
});

describe('Billing', () => {
  test('balance, the public pricing, spend by month over the org keys; purchases off by default', async ({ cw }) => {
    const db = cw.t.ctx.db.db;
    const second = await cw.newKey({ orgId: cw.orgId });
    await addMonthUsage(db, cw.key.keyId, '2026-10', 120, 60_000);
    await addMonthUsage(db, second.keyId, '2026-10', 30, 15_000);
    await addMonthUsage(db, cw.key.keyId, '2026-11', 10, 5_000);
    const other = await cw.otherOrg();
    await addMonthUsage(db, other.key.keyId, '2026-11', 999, 999_000);

    const data = json(await cw.api({ url: '/api/v1/billing' })).data;
    expect(data.balanceUsd).toBe(100);
    expect(data.pricing).toEqual(json(await cw.api({ url: '/api/v1/pricing', cookie: null })).data);
    expect(data.spendByMonth).toEqual([
      { month: '2026-11', tokensUsd: 0.005, cloudSeconds: 10 },
      { month: '2026-10', tokensUsd: 0.075, cloudSeconds: 150 },
    ]);
    expect(data.purchase).toEqual({ provider: 'none', enabled: false });
    expect(data.purchases).toEqual([]);
    const buy = await cw.api({ method: 'POST', url: '/api/v1/billing/purchases', body: { packId: 'starter' } });
    expect(buy.statusCode).toBe(403);
    expect(json(buy).error.code).toBe('forbidden');
    expect(json(await cw.api({ url: '/api/v1/me' })).data.balanceUsd).toBe(100);
  });

  test('with the manual provider a pack credits the balance once and is listed', async () => {
    const cw = await createConsoleWorld({ env: { VITALS_CONSOLE_PAYMENTS: 'manual' } });
    try {
      const res = await cw.api({ method: 'POST', url: '/api/v1/billing/purchases', body: { packId: 'growth' } });
      expect(res.statusCode).toBe(201);
      const { purchase, balanceUsd } = json(res).data;
      expect(purchase).toMatchObject({
        packId: 'growth',
        priceUsd: 100,
        tokensUsd: 110,
        provider: 'manual',
        status: 'completed',
      });
      expect(purchase.id).toMatch(/^pur_[0-9a-f]{24}$/);
      expect(balanceUsd).toBe(210);
      const billing = json(await cw.api({ url: '/api/v1/billing' })).data;
      expect(billing.purchase).toEqual({ provider: 'manual', enabled: true });
      expect(billing.purchases).toEqual([purchase]);
      const { completePurchase } = await import('../src/console/billing.js');
      expect(await completePurchase(cw.t.ctx.db.db, purchase.id, cw.clock.now())).toBe(false);
      expect(json(await cw.api({ url: '/api/v1/me' })).data.balanceUsd).toBe(210);
      const bad = await cw.api({ method: 'POST', url: '/api/v1/billing/purchases', body: { packId: 'mega' } });
      expect(bad.statusCode).toBe(400);
      expect(json(bad).error.code).toBe('validation_error');
      const other = await cw.otherOrg();
      expect(json(await cw.api({ url: '/api/v1/billing', cookie: other.cookie })).data).toMatchObject({
        balanceUsd: 100,
        purchases: [],
      });
    } finally {
      await cw.close();
    }
  });
});

test('an unmetered organization reads null (unmetered) everywhere and cannot buy a pack (409)', async () => {
  const cw = await createConsoleWorld({ env: { VITALS_CONSOLE_PAYMENTS: 'manual' } });
  try {
    await setTokenBalance(cw.t.ctx.db.db, cw.orgId, null);
    expect(json(await cw.api({ url: '/api/v1/me' })).data.balanceUsd).toBeNull();
    expect(json(await cw.api({ url: '/api/v1/overview' })).data.balanceUsd).toBeNull();
    expect(json(await cw.api({ url: '/api/v1/billing' })).data.balanceUsd).toBeNull();
    const buy = await cw.api({ method: 'POST', url: '/api/v1/billing/purchases', body: { packId: 'starter' } });
    expect(buy.statusCode).toBe(409);
    expect(json(buy).error.code).toBe('conflict');
    expect(json(await cw.api({ url: '/api/v1/billing' })).data.purchases).toEqual([]);
    // Once the operator sets a balance (0 included) the organization is metered and may buy.
    await setTokenBalance(cw.t.ctx.db.db, cw.orgId, 0);
    const ok = await cw.api({ method: 'POST', url: '/api/v1/billing/purchases', body: { packId: 'starter' } });
    expect(ok.statusCode).toBe(201);
    expect(json(ok).data.balanceUsd).toBe(10);
  } finally {
    await cw.close();
  }
});

describe('Overview', () => {
  test("the month's seconds and spend against the caps, measurements per day, quality mix, refusals", async ({
    cw,
  }) => {
    const db = cw.t.ctx.db.db;
    await cw.api({
      method: 'PATCH',
      url: `/api/v1/keys/${cw.key.keyId}`,
      body: { quotaSecondsMonth: 3600, tokenQuotaMonthUsd: 20 },
    });
    await measure(cw, goodMeasurement({ userRef: 'ada' }));
    await measure(cw, poorMeasurement());
    cw.clock.advance(DAY);
    await measure(cw, goodMeasurement({ userRef: 'ada', quality: { level: 'fair', score: 0.6, usable: true } }));
    await cw.call({ method: 'POST', url: '/sdk/v1/auth/test', signSecret: 'sk_wrong' });
    await cw.call({ method: 'POST', url: '/sdk/v1/auth/test', signSecret: 'sk_wrong' });
    await cw.call({ method: 'POST', url: '/sdk/v1/auth/test', headers: { 'x-nonce': 'short' } });
    await addMonthUsage(db, cw.key.keyId, '2026-11', 90, 1_250_000);
    const other = await cw.otherOrg();
    await measure(cw, goodMeasurement(), other.key);
    await addMonthUsage(db, other.key.keyId, '2026-11', 500, 9_000_000);
    // A day has passed: the session of the morning is over.
    cw.cookie = (await cw.signIn(cw.email, PASSWORD)).cookie!;

    const res = await cw.api({ url: '/api/v1/overview' });
    expect(res.statusCode, res.body).toBe(200);
    const o = json(res).data;
    expect(o).toMatchObject({
      month: '2026-11',
      cloudSeconds: { used: 90, quota: 3600 },
      tokenSpendUsd: { used: 1.25, cap: 20 },
      balanceUsd: 100,
      measurementsPerDay: [
        { day: '2026-11-01', count: 2 },
        { day: '2026-11-02', count: 1 },
      ],
      qualityMix: { good: 1, fair: 1, poor: 1, unknown: 0 },
      refusalsByCode: [
        { errorCode: 'invalid_signature', count: 2 },
        { errorCode: 'invalid_nonce', count: 1 },
      ],
    });
    expect(o.keys).toEqual([
      {
        keyId: cw.key.keyId,
        name: null,
        status: 'active',
        cloudSeconds: 90,
        quotaSecondsMonth: 3600,
        tokensUsd: 1.25,
        tokenQuotaMonthUsd: 20,
      },
    ]);

    // A second active key without caps: no organization-wide cap any more.
    await cw.api({ method: 'POST', url: '/api/v1/keys', body: {} });
    const after = json(await cw.api({ url: '/api/v1/overview' })).data;
    expect(after.cloudSeconds.quota).toBeNull();
    expect(after.tokenSpendUsd.cap).toBeNull();

    const october = json(await cw.api({ url: '/api/v1/overview?month=2026-10' })).data;
    expect(october).toMatchObject({
      month: '2026-10',
      cloudSeconds: { used: 0 },
      measurementsPerDay: [],
      refusalsByCode: [],
    });
    for (const month of ['2026-13', '26-11', 'now']) {
      const res = await cw.api({ url: `/api/v1/overview?month=${month}` });
      expect(res.statusCode, month).toBe(400);
    }
  });
});
