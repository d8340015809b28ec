/**
 * GET /sdk/v1/users, /users/{ref}/measurements and /users/{ref}/baseline (spec: Endpoints;
 * Resources, End-user summary and Baseline; CLARIFICATIONS 11, 12, 15, 16). Measurements are placed
 * in time with the injected clock.
 */
import { describe, expect } from 'vitest';
import { goodMeasurement, json, test, type World } from './helpers.js';

const DAY = 86_400_000;

async function submitAt(w: World, at: number, body: Record<string, unknown>) {
  w.clock.set(at);
  const res = await w.call({ method: 'POST', url: '/sdk/v1/measurements', body });
  expect(res.statusCode).toBe(201);
  return json(res).data;
}

const hr = (value: number) => ({ cardiac: { heartRate: { value, unit: 'bpm', confidence: 0.9 } } });

/** Median and raw MAD computed here, independently of the service. */
function medianOf(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}
function madOf(xs: number[]): number {
  const med = medianOf(xs);
  return medianOf(xs.map((x) => Math.abs(x - med)));
}

describe('GET /sdk/v1/users', () => {
  test('.happy lists end users most recently active first, with their summary', async ({ world }) => {
    const t0 = world.clock.now();
    await submitAt(
      world,
      t0,
      goodMeasurement({ userRef: 'alice', quality: { level: 'good', score: 0.9, usable: true } }),
    );
    await submitAt(world, t0 + 1000, goodMeasurement({ userRef: 'bob' }));
    await submitAt(
      world,
      t0 + 2000,
      goodMeasurement({ userRef: 'alice', quality: { level: 'fair', score: 0.5, usable: true } }),
    );
    await submitAt(world, t0 + 3000, goodMeasurement({ userRef: 'carol' }));
    await submitAt(world, t0 + 4000, { source: 'web' }); // no userRef: no end user
    const res = await world.call({ url: '/sdk/v1/users' });
    expect(res.statusCode).toBe(200);
    const data = json(res).data;
    expect(Object.keys(data).sort()).toEqual(['items', 'page', 'perPage', 'total']);
    expect(data).toMatchObject({ total: 3, page: 1, perPage: 20 });
    expect(data.items.map((u: any) => u.userRef)).toEqual(['carol', 'alice', 'bob']);
    expect(data.items[1]).toEqual({
      userRef: 'alice',
      measurements: 2,
      firstSeenAt: t0,
      lastSeenAt: t0 + 2000,
      avgQuality: 0.7,
    });
  });

  test('.happy pages from 1 with perPage', async ({ world }) => {
    const t0 = world.clock.now();
    for (let i = 0; i < 5; i++) await submitAt(world, t0 + i * 1000, { source: 'web', userRef: `u${i}` });
    const p1 = json(await world.call({ url: '/sdk/v1/users?page=1&perPage=2' })).data;
    const p3 = json(await world.call({ url: '/sdk/v1/users?page=3&perPage=2' })).data;
    const p4 = json(await world.call({ url: '/sdk/v1/users?page=4&perPage=2' })).data;
    expect(p1.items.map((u: any) => u.userRef)).toEqual(['u4', 'u3']);
    expect(p3.items.map((u: any) => u.userRef)).toEqual(['u0']);
    expect(p4.items).toEqual([]);
    expect([p1.total, p3.total, p4.total]).toEqual([5, 5, 5]);
  });

  test.for(['perPage=0', 'perPage=101', 'perPage=x', 'page=0', 'page=-1', 'page=1.5'])(
    '.error %s is 400 validation_error',
    async (q, { world }) => {
      const res = await world.call({ url: `/sdk/v1/users?${q}` });
      expect(res.statusCode).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
    },
  );

  test.for(['perPage=1', 'perPage=100'])('.happy %s is accepted', async (q, { world }) => {
    expect((await world.call({ url: `/sdk/v1/users?${q}` })).statusCode).toBe(200);
  });

  test('.security scoped to the key: a sibling key of the same organization sees an empty list', async ({ world }) => {
    await submitAt(world, world.clock.now(), { source: 'web', userRef: 'alice' });
    const sibling = await world.newKey({ orgId: world.key.orgId });
    const data = json(await world.call({ url: '/sdk/v1/users', key: sibling })).data;
    expect(data).toMatchObject({ items: [], total: 0 });
  });
});

describe('GET /sdk/v1/users/{ref}/measurements', () => {
  test('.happy newest first, in the standard measurement shape', async ({ world }) => {
    const t0 = world.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await submitAt(world, t0 + i * 1000, goodMeasurement({ userRef: 'alice' }))).id);
    await submitAt(world, t0 + 5000, goodMeasurement({ userRef: 'bob' }));
    const data = json(await world.call({ url: '/sdk/v1/users/alice/measurements' })).data;
    expect(data.items.map((m: any) => m.id)).toEqual([...ids].reverse());
    expect(data.total).toBe(3);
    expect(data.items[0]).toMatchObject({
      userRef: 'alice',
      origin: 'on_device',
      attested: false,
      keyId: world.key.keyId,
    });
    expect(data.items[0]).not.toHaveProperty('raw');
  });

  test('.happy from/to bound the creation time inclusively, and paging applies within them', async ({ world }) => {
    const t0 = world.clock.now();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push((await submitAt(world, t0 + i * 1000, { source: 'web', userRef: 'alice' })).id);
    const within = json(
      await world.call({ url: `/sdk/v1/users/alice/measurements?from=${t0 + 1000}&to=${t0 + 4000}` }),
    ).data;
    expect(within.items.map((m: any) => m.id)).toEqual([ids[4], ids[3], ids[2], ids[1]]);
    expect(within.total).toBe(4);
    const p2 = json(
      await world.call({ url: `/sdk/v1/users/alice/measurements?from=${t0 + 1000}&to=${t0 + 4000}&page=2&perPage=3` }),
    ).data;
    expect(p2.items.map((m: any) => m.id)).toEqual([ids[1]]);
  });

  test('.happy include=assessment adds an assessment to each item', async ({ world }) => {
    await submitAt(world, world.clock.now(), goodMeasurement({ userRef: 'alice' }));
    const data = json(await world.call({ url: '/sdk/v1/users/alice/measurements?include=assessment' })).data;
    expect(data.items[0].assessment).toMatchObject({ version: 1, status: 'assessed' });
  });

  test('.happy an unknown user has an empty history', async ({ world }) => {
    const data = json(await world.call({ url: '/sdk/v1/users/nobody/measurements' })).data;
    expect(data).toMatchObject({ items: [], total: 0 });
  });

  test.for([
    ['perPage=0', 'alice'],
    ['perPage=101', 'alice'],
    ['page=0', 'alice'],
    ['from=abc', 'alice'],
    ['to=-1', 'alice'],
    ['include=raw', 'alice'],
    ['', 'jane%20doe'],
    ['', 'u'.repeat(65)],
  ])('.error ?%s on %s is 400 validation_error', async ([q, ref], { world }) => {
    const res = await world.call({ url: `/sdk/v1/users/${ref}/measurements?${q}` });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });

  test('.security another key of the same organization sees an empty history', async ({ world }) => {
    await submitAt(world, world.clock.now(), goodMeasurement({ userRef: 'alice' }));
    const sibling = await world.newKey({ orgId: world.key.orgId });
    const data = json(await world.call({ url: '/sdk/v1/users/alice/measurements', key: sibling })).data;
    expect(data).toMatchObject({ items: [], total: 0 });
    const base = json(await world.call({ url: '/sdk/v1/users/alice/baseline', key: sibling })).data;
    expect(base).toMatchObject({ status: 'insufficient_data', sampleCount: 0, metrics: {} });
  });
});

describe('GET /sdk/v1/users/{ref}/baseline', () => {
  test('.happy median, raw MAD and the ±2·MAD corridor per metric, worked by hand', async ({ world }) => {
    const t0 = world.clock.now();
    const values = [60, 62, 65, 70, 90]; // median 65; |x-65| = 5,3,0,5,25 → MAD 5 → corridor 55..75
    for (const [i, v] of values.entries())
      await submitAt(world, t0 + i * 60_000, goodMeasurement({ userRef: 'alice', ...hr(v) }));
    const res = await world.call({ url: '/sdk/v1/users/alice/baseline' });
    expect(res.statusCode).toBe(200);
    const b = json(res).data;
    expect(b).toMatchObject({ userRef: 'alice', status: 'ok', windowDays: 30, minSamples: 5, sampleCount: 5 });
    expect(b.metrics.heartRateBpm).toEqual({ median: 65, mad: 5, low: 55, high: 75, unit: 'bpm', samples: 5 });
    expect(medianOf(values)).toBe(65);
    expect(madOf(values)).toBe(5);
    // The other metrics are constant in goodMeasurement(): MAD 0, a degenerate corridor.
    expect(b.metrics.rmssdMs).toEqual({ median: 40, mad: 0, low: 40, high: 40, unit: 'ms', samples: 5 });
    expect(Object.keys(b.metrics).sort()).toEqual(
      [
        'breathingRate',
        'diastolicMmHg',
        'heartRateBpm',
        'rmssdMs',
        'sdnnMs',
        'spo2Pct',
        'stressIndex',
        'systolicMmHg',
      ].sort(),
    );
    expect(b.disclaimers.length).toBeGreaterThan(0);
  });

  test('.happy an even number of values: the median is the mean of the middle two', async ({ world }) => {
    const values = [50, 54, 58, 60, 70, 80];
    const t0 = world.clock.now();
    for (const [i, v] of values.entries())
      await submitAt(world, t0 + i * 1000, goodMeasurement({ userRef: 'u', ...hr(v) }));
    const m = json(await world.call({ url: '/sdk/v1/users/u/baseline' })).data.metrics.heartRateBpm;
    expect(m.median).toBe(medianOf(values)); // 59
    expect(m.mad).toBe(madOf(values)); // |x-59| = 9,5,1,1,11,21 → 7
    expect([m.low, m.high]).toEqual([59 - 2 * 7, 59 + 2 * 7]);
  });

  test('.happy four measurements are insufficient_data with empty metrics', async ({ world }) => {
    for (let i = 0; i < 4; i++) await submitAt(world, world.clock.now() + 1000, goodMeasurement({ userRef: 'u' }));
    const b = json(await world.call({ url: '/sdk/v1/users/u/baseline' })).data;
    expect(b).toMatchObject({
      status: 'insufficient_data',
      metrics: {},
      sampleCount: 4,
      windowDays: 30,
      minSamples: 5,
    });
  });

  test('.happy status ok when some metric has 5 values; metrics holds only those (CLARIFICATIONS 16)', async ({
    world,
  }) => {
    const t0 = world.clock.now();
    for (let i = 0; i < 5; i++) {
      // Heart rate each time; HRV only in three of them.
      const body = goodMeasurement({
        userRef: 'u',
        hrv: i < 3 ? { sdnnMs: 50, rmssdMs: 40, pnn50Pct: 20 } : null,
        bloodPressure: null,
        spo2: null,
        stress: null,
        respiratory: { breathingRate: null },
      });
      await submitAt(world, t0 + i * 1000, body);
    }
    const b = json(await world.call({ url: '/sdk/v1/users/u/baseline' })).data;
    expect(b.status).toBe('ok');
    expect(Object.keys(b.metrics)).toEqual(['heartRateBpm']);
  });

  test('.happy only usable measurements count: complete, quality good or fair', async ({ world }) => {
    const t0 = world.clock.now();
    let at = t0;
    const next = () => (at += 1000);
    for (let i = 0; i < 4; i++) await submitAt(world, next(), goodMeasurement({ userRef: 'u', ...hr(70) }));
    await submitAt(world, next(), goodMeasurement({ userRef: 'u', isComplete: false, ...hr(70) }));
    await submitAt(world, next(), goodMeasurement({ userRef: 'u', quality: undefined, ...hr(70) }));
    await submitAt(world, next(), {
      source: 'web',
      userRef: 'u',
      quality: { level: 'poor', score: 0.1, usable: false },
      isComplete: false,
    });
    expect(json(await world.call({ url: '/sdk/v1/users/u/baseline' })).data).toMatchObject({
      status: 'insufficient_data',
      sampleCount: 4,
    });
    await submitAt(
      world,
      next(),
      goodMeasurement({ userRef: 'u', quality: { level: 'fair', score: 0.5, usable: true }, ...hr(70) }),
    );
    expect(json(await world.call({ url: '/sdk/v1/users/u/baseline' })).data).toMatchObject({
      status: 'ok',
      sampleCount: 5,
    });
  });

  test('.happy the window is the last 30 days, measured on the injected clock', async ({ world }) => {
    const now = world.clock.now();
    // One measurement exactly 30 days old (inside) and one a millisecond older (outside).
    await submitAt(world, now - 30 * DAY - 1, goodMeasurement({ userRef: 'u', ...hr(200) }));
    await submitAt(world, now - 30 * DAY, goodMeasurement({ userRef: 'u', ...hr(60) }));
    for (let i = 1; i <= 4; i++) await submitAt(world, now - i * DAY, goodMeasurement({ userRef: 'u', ...hr(60) }));
    world.clock.set(now);
    const b = json(await world.call({ url: '/sdk/v1/users/u/baseline' })).data;
    expect(b.sampleCount).toBe(5);
    expect(b.metrics.heartRateBpm).toMatchObject({ median: 60, mad: 0, samples: 5 });
    // A day later the oldest falls out of the window.
    world.clock.set(now + DAY);
    expect(json(await world.call({ url: '/sdk/v1/users/u/baseline' })).data.status).toBe('insufficient_data');
  });

  test('.happy at most the 200 most recent usable measurements', async ({ world }) => {
    const t0 = world.clock.now() - 10 * DAY;
    // The 5 oldest carry a breathing rate; the 200 newest do not. With the cap, breathing rate has no values.
    for (let i = 0; i < 5; i++) await submitAt(world, t0 + i * 1000, goodMeasurement({ userRef: 'u' }));
    for (let i = 5; i < 205; i++)
      await submitAt(world, t0 + i * 1000, goodMeasurement({ userRef: 'u', respiratory: { breathingRate: null } }));
    const b = json(await world.call({ url: '/sdk/v1/users/u/baseline' })).data;
    expect(b.sampleCount).toBe(200);
    expect(b.metrics.heartRateBpm.samples).toBe(200);
    expect(b.metrics).not.toHaveProperty('breathingRate');
  });

  test('.error a malformed userRef is 400 validation_error', async ({ world }) => {
    const res = await world.call({ url: '/sdk/v1/users/a%2Fb/baseline' });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });
});
