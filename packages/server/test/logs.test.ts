/**
 * GET /sdk/v1/logs (spec: GET /sdk/v1/logs; Usage-log row; CLARIFICATIONS 13, 14, 15): keyset
 * paging over (time, id), oldest first; `cursor` wins over `sinceTime`; the empty page repeats the
 * cursor; what is and is not logged.
 */
import { describe, expect } from 'vitest';
import { ZERO_LOG_ID } from '@vitals/protocol';
import { goodMeasurement, json, test, type World } from './helpers.js';

const AUTH_TEST = { method: 'POST', url: '/sdk/v1/auth/test' } as const;

/** Makes `n` success rows, one per millisecond step `stepMs`; returns their times. */
async function makeRows(w: World, n: number, stepMs = 1000): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    times.push(w.clock.now());
    expect((await w.call(AUTH_TEST)).statusCode).toBe(200);
    w.clock.advance(stepMs);
  }
  return times;
}

async function page(w: World, query: string) {
  const res = await w.call({ url: `/sdk/v1/logs${query}` });
  expect(res.statusCode).toBe(200);
  return json(res).data as { items: any[]; nextCursor: string; serverTime: number };
}

describe('GET /sdk/v1/logs .happy', () => {
  test('oldest first, default limit 50, serverTime from the clock', async ({ world }) => {
    const times = await makeRows(world, 55);
    const p = await page(world, '');
    expect(p.items).toHaveLength(50);
    expect(p.items.map((r) => r.time)).toEqual(times.slice(0, 50));
    expect(p.serverTime).toBe(world.clock.now());
    expect(p.nextCursor).toBe(`${p.items[49].time}.${p.items[49].id}`);
  });

  test('the cursor walks every row exactly once, strictly after, with ties on time broken by id', async ({ world }) => {
    // Three rows per millisecond: the id decides their order within the same time.
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 3; j++) await world.call(AUTH_TEST);
      world.clock.advance(1);
    }
    const all = (await page(world, '?limit=200')).items;
    expect(all).toHaveLength(12);
    const sorted = [...all].sort((a, b) => a.time - b.time || (a.id < b.id ? -1 : 1));
    expect(all).toEqual(sorted);
    const seen: string[] = [];
    let cursor = '';
    for (let guard = 0; guard < 20; guard++) {
      const p = await page(world, `?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      if (p.items.length === 0) {
        expect(p.nextCursor).toBe(cursor);
        break;
      }
      seen.push(...p.items.map((r) => r.id));
      cursor = p.nextCursor;
    }
    expect(seen).toEqual(all.map((r) => r.id));
  });

  test('sinceTime keeps entries at or after it', async ({ world }) => {
    const times = await makeRows(world, 5);
    const p = await page(world, `?sinceTime=${times[2]}`);
    expect(p.items.map((r) => r.time)).toEqual(times.slice(2));
  });

  test('cursor wins over sinceTime', async ({ world }) => {
    const times = await makeRows(world, 5);
    const first = await page(world, '?limit=1');
    const p = await page(world, `?cursor=${first.nextCursor}&sinceTime=${times[4]}`);
    expect(p.items.map((r) => r.time)).toEqual(times.slice(1));
  });

  test('an empty page repeats the cursor sent', async ({ world }) => {
    await makeRows(world, 2);
    const p1 = await page(world, '?limit=200');
    const p2 = await page(world, `?cursor=${p1.nextCursor}`);
    expect(p2.items).toEqual([]);
    expect(p2.nextCursor).toBe(p1.nextCursor);
    // A cursor that points past everything (a valid format, unknown id) also comes back as sent.
    const far = `99999999999999.log_ffffffffffffffffffffffff`;
    expect((await page(world, `?cursor=${far}`)).nextCursor).toBe(far);
  });

  test.for([
    ['no sinceTime', '', `0.${ZERO_LOG_ID}`],
    ['sinceTime 1700000000000', '?sinceTime=1700000000000', `1700000000000.${ZERO_LOG_ID}`],
  ])('an empty page without a cursor, %s: nextCursor is <sinceTime or 0>.%s', async ([, q, expected], { world }) => {
    const p = await page(world, q);
    expect(p.items).toEqual([]);
    expect(p.nextCursor).toBe(expected);
  });

  test('the empty-page cursor without a cursor resumes exactly where sinceTime would', async ({ world }) => {
    const t = world.clock.now() + 10_000;
    const empty = await page(world, `?sinceTime=${t}`);
    world.clock.set(t);
    await makeRows(world, 2);
    const viaCursor = await page(world, `?cursor=${empty.nextCursor}`);
    const viaSince = await page(world, `?sinceTime=${t}`);
    expect(viaCursor.items.map((r) => r.id)).toEqual(viaSince.items.map((r) => r.id));
    expect(viaCursor.items).toHaveLength(2);
  });

  test('limit 1 and 200 are accepted', async ({ world }) => {
    await makeRows(world, 3);
    expect((await page(world, '?limit=1')).items).toHaveLength(1);
    expect((await page(world, '?limit=200')).items).toHaveLength(3);
  });
});

describe('GET /sdk/v1/logs .error (400 validation_error)', () => {
  test.for([
    'limit=0',
    'limit=201',
    'limit=-1',
    'limit=abc',
    'limit=1.5',
    'sinceTime=yesterday',
    'sinceTime=-5',
    'cursor=abc',
    'cursor=123',
    'cursor=123.',
    'cursor=.log_000000000000000000000000',
    'cursor=123.log_123',
    'cursor=123.meas_000000000000000000000000',
    'cursor=12a.log_000000000000000000000000',
    'cursor=123.log_00000000000000000000000g',
  ])('%s', async (q, { world }) => {
    const res = await world.call({ url: `/sdk/v1/logs?${q}` });
    expect(res.statusCode).toBe(400);
    expect(json(res)).toEqual({ ok: false, error: { code: 'validation_error', message: expect.any(String) } });
    expect(await world.usageRows(world.key.keyId)).toHaveLength(0);
  });
});

describe('what the usage log records', () => {
  test('successful reads of the logs endpoint are not logged', async ({ world }) => {
    for (let i = 0; i < 3; i++) await page(world, '');
    expect(await world.usageRows(world.key.keyId)).toHaveLength(0);
  });

  test('calls that authenticated then failed validation, and unknown ids, leave no row', async ({ world }) => {
    await world.call({ method: 'POST', url: '/sdk/v1/measurements', body: { source: 'web', userRef: '' } });
    await world.call({ url: '/sdk/v1/measurements/meas_000000000000000000000000' });
    await world.call({ url: '/sdk/v1/users?perPage=0' });
    await world.call({ url: '/sdk/v1/logs?cursor=bad' });
    expect(await world.usageRows(world.key.keyId)).toHaveLength(0);
  });

  test('one request id ties the HTTP call, its log row and the stored measurement', async ({ world }) => {
    const res = await world.call({ method: 'POST', url: '/sdk/v1/measurements', body: goodMeasurement() });
    const rid = res.headers['x-request-id'];
    const [row] = (await page(world, '')).items;
    expect(row.requestId).toBe(rid);
    expect(json(res).data.requestId).toBe(rid);
  });

  test('rows are scoped to the key: a sibling key of the same organization sees none of them', async ({ world }) => {
    await makeRows(world, 3);
    const sibling = await world.newKey({ orgId: world.key.orgId });
    const res = await world.call({ url: '/sdk/v1/logs', key: sibling });
    expect(json(res).data.items).toEqual([]);
  });

  test('every row carries every field, null where it does not apply, across the three statuses', async () => {
    const { createWorld } = await import('./helpers.js');
    const w = await createWorld({ keyOptions: { rateLimitPerMin: 2 } });
    try {
      await w.call({ method: 'POST', url: '/sdk/v1/measurements', body: goodMeasurement() });
      w.clock.advance(1);
      await w.call({ ...AUTH_TEST, signSecret: 'wrong' });
      w.clock.advance(1);
      await w.call(AUTH_TEST);
      w.clock.advance(1);
      await w.call(AUTH_TEST);
      w.clock.advance(60_000);
      const rows = (await page(w, '')).items;
      expect(rows.map((r) => r.status)).toEqual(['success', 'unauthorized', 'success', 'rate_limited']);
      for (const r of rows) {
        expect(Object.keys(r).sort()).toEqual([
          'endpoint',
          'error',
          'errorCode',
          'id',
          'latencyMs',
          'method',
          'qualityLevel',
          'requestId',
          'status',
          'time',
        ]);
      }
      expect(rows.map((r) => [r.errorCode, r.qualityLevel, r.error === null])).toEqual([
        [null, 'good', true],
        ['invalid_signature', null, false],
        [null, null, true],
        ['rate_limited', null, false],
      ]);
    } finally {
      await w.close();
    }
  });
});
