/**
 * POST /sdk/v1/measurements and GET /sdk/v1/measurements/{id} (spec: Endpoints; Resources,
 * Measurement; CLARIFICATIONS 1, 4, 10, 17).
 */
import { describe, expect } from 'vitest';
import { ID_PATTERNS } from '@vitals/protocol';
import { goodMeasurement, json, poorMeasurement, test, type World } from './helpers.js';

const POST = { method: 'POST', url: '/sdk/v1/measurements' } as const;
const RAW = { rrIntervalsMs: [800, 810, 790], ppgSignal: [0.1, 0.2, 0.15], sampleRateHz: 30 };

async function submit(w: World, body: Record<string, unknown>, url: string = POST.url) {
  return w.call({ method: 'POST', url, body });
}

describe('POST /sdk/v1/measurements .happy', () => {
  test('stores the measurement: 201, id and keyId assigned, fields kept', async ({ world }) => {
    const body = goodMeasurement({ userRef: 'user-1', sdkVersion: '1.4.0+web', modelsVersion: 'm2026.11' });
    const res = await submit(world, body);
    expect(res.statusCode).toBe(201);
    const env = json(res);
    expect(Object.keys(env).sort()).toEqual(['data', 'ok']);
    expect(env.ok).toBe(true);
    const m = env.data;
    expect(m.id).toMatch(ID_PATTERNS.measurement);
    expect(m.keyId).toBe(world.key.keyId);
    expect(m.requestId).toBe(res.headers['x-request-id']);
    for (const f of [
      'source',
      'durationSec',
      'isComplete',
      'quality',
      'cardiac',
      'hrv',
      'respiratory',
      'stress',
      'bloodPressure',
      'spo2',
      'userRef',
      'sdkVersion',
      'modelsVersion',
    ])
      expect(m[f], f).toEqual(body[f]);
    expect(m.origin).toBe('on_device');
    expect(m.attested).toBe(false);
    expect(m).not.toHaveProperty('raw');
  });

  test('origin and attested are server-set: a client sending cloud/true is ignored', async ({ world }) => {
    const res = await submit(world, goodMeasurement({ origin: 'cloud', attested: true }));
    expect(res.statusCode).toBe(201);
    const { id } = json(res).data;
    expect(json(res).data).toMatchObject({ origin: 'on_device', attested: false });
    const got = json(await world.call({ url: `/sdk/v1/measurements/${id}` })).data;
    expect(got).toMatchObject({ origin: 'on_device', attested: false });
  });

  test('only source is required; optional fields not sent stay absent (CLARIFICATIONS 4)', async ({ world }) => {
    const res = await submit(world, { source: 'web' });
    expect(res.statusCode).toBe(201);
    const m = json(res).data;
    for (const f of ['userRef', 'sdkVersion', 'modelsVersion', 'quality', 'cardiac', 'durationSec', 'raw'])
      expect(m, f).not.toHaveProperty(f);
  });

  test('the usage row is a success with the quality level and the same request id as the measurement', async ({
    world,
  }) => {
    const res = await submit(world, goodMeasurement({ quality: { level: 'fair', score: 0.6, usable: true } }));
    world.clock.advance(1);
    const rows = json(await world.call({ url: '/sdk/v1/logs' })).data.items;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'success',
      endpoint: '/sdk/v1/measurements',
      method: 'POST',
      qualityLevel: 'fair',
      requestId: res.headers['x-request-id'],
      errorCode: null,
      error: null,
    });
    expect(Number.isInteger(rows[0].latencyMs)).toBe(true);
    const stored = json(await world.call({ url: `/sdk/v1/measurements/${json(res).data.id}` })).data;
    expect(stored.requestId).toBe(rows[0].requestId);
  });

  test('a measurement without quality logs qualityLevel null', async ({ world }) => {
    await submit(world, { source: 'web' });
    const rows = await world.usageRows(world.key.keyId);
    expect(rows[0]).toMatchObject({ status: 'success', quality_level: null });
  });

  test('a poor measurement with every metric null is stored (spec rule 1)', async ({ world }) => {
    const res = await submit(world, poorMeasurement());
    expect(res.statusCode).toBe(201);
    expect(json(res).data).toMatchObject({
      quality: { level: 'poor' },
      hrv: null,
      stress: null,
      cardiac: { heartRate: null },
    });
    const rows = await world.usageRows(world.key.keyId);
    expect(rows[0].quality_level).toBe('poor');
  });

  test.for([
    ['?advanced=true', {}],
    ['', { includeAdvanced: true }],
  ] as const)('raw is persisted and returned with the opt-in (%s%o)', async ([query, extra], { world }) => {
    const res = await submit(world, goodMeasurement({ raw: RAW, ...extra }), `${POST.url}${query}`);
    expect(res.statusCode).toBe(201);
    expect(json(res).data.raw).toEqual(RAW);
    const id = json(res).data.id;
    expect(json(await world.call({ url: `/sdk/v1/measurements/${id}?advanced=true` })).data.raw).toEqual(RAW);
    expect(json(await world.call({ url: `/sdk/v1/measurements/${id}` })).data).not.toHaveProperty('raw');
  });

  test('raw sent without the opt-in is neither returned nor persisted', async ({ world }) => {
    const res = await submit(world, goodMeasurement({ raw: RAW }));
    expect(res.statusCode).toBe(201);
    expect(json(res).data).not.toHaveProperty('raw');
    const got = await world.call({ url: `/sdk/v1/measurements/${json(res).data.id}?advanced=true` });
    expect(json(got).data).not.toHaveProperty('raw');
  });

  test.for([
    ['1', 'a'],
    ['64 characters', 'v'.repeat(64)],
    ['dots, plus, dash, underscore', '2.0.1-rc_1+build.7'],
  ])('sdkVersion/modelsVersion: %s is kept as sent', async ([, v], { world }) => {
    const res = await submit(world, { source: 'web', sdkVersion: v, modelsVersion: v });
    expect(res.statusCode).toBe(201);
    expect(json(res).data).toMatchObject({ sdkVersion: v, modelsVersion: v });
  });

  test.for(['a', 'A.b_c:d@e-f', 'u'.repeat(64)])('userRef %s is accepted', async (userRef, { world }) => {
    const res = await submit(world, { source: 'web', userRef });
    expect(res.statusCode).toBe(201);
    expect(json(res).data.userRef).toBe(userRef);
  });
});

describe('POST /sdk/v1/measurements .error (400 validation_error, no row, nothing stored)', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['source missing', { durationSec: 60 }],
    ['source a number', { source: 7 }],
    ['source null', { source: null }],
    ['source empty', { source: '' }],
    ['sdkVersion empty', { source: 'web', sdkVersion: '' }],
    ['sdkVersion 65 characters', { source: 'web', sdkVersion: 'v'.repeat(65) }],
    ['sdkVersion starting with a dot', { source: 'web', sdkVersion: '.1' }],
    ['sdkVersion with a space', { source: 'web', sdkVersion: '1.0 beta' }],
    ['sdkVersion a number', { source: 'web', sdkVersion: 1 }],
    ['modelsVersion with a slash', { source: 'web', modelsVersion: 'models/1' }],
    ['modelsVersion 65 characters', { source: 'web', modelsVersion: 'm'.repeat(65) }],
    ['userRef empty (CLARIFICATIONS 4)', { source: 'web', userRef: '' }],
    ['userRef 65 characters', { source: 'web', userRef: 'u'.repeat(65) }],
    ['userRef with a space', { source: 'web', userRef: 'jane doe' }],
    ['userRef with a slash', { source: 'web', userRef: 'a/b' }],
    ['userRef a number', { source: 'web', userRef: 42 }],
    [
      'poor quality with a heart rate (CLARIFICATIONS 17)',
      poorMeasurement({ cardiac: { heartRate: { value: 70, unit: 'bpm', confidence: 0.5 } } }),
    ],
    ['poor quality with hrv', poorMeasurement({ hrv: { sdnnMs: 50, rmssdMs: 40, pnn50Pct: 20 } })],
    ['poor quality with spo2', poorMeasurement({ spo2: { value: 97, unit: '%', confidence: 0.5, tier: 'beta' } })],
    ['quality level unknown', { source: 'web', quality: { level: 'great', score: 1, usable: true } }],
    ['isComplete a string', { source: 'web', isComplete: 'yes' }],
    ['heart rate unit wrong', goodMeasurement({ cardiac: { heartRate: { value: 70, unit: 'Hz' } } })],
    ['stress level outside the vocabulary', goodMeasurement({ stress: { index: 10, level: 'calm', unit: 'index' } })],
    ['includeAdvanced a string', { source: 'web', includeAdvanced: 'true' }],
  ];
  test.for(cases)('%s', async ([, body], { world }) => {
    const res = await submit(world, body);
    expect(res.statusCode).toBe(400);
    expect(json(res)).toEqual({ ok: false, error: { code: 'validation_error', message: expect.any(String) } });
    expect(await world.usageRows(world.key.keyId)).toHaveLength(0);
    const n = await world.t.ctx.db.db
      .selectFrom('measurements')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(0);
  });

  test.for([
    ['a JSON array', '[]'],
    ['a JSON string', '"web"'],
    ['no body at all', undefined],
    ['not JSON', 'source=web'],
  ])('a body that is %s is 400 validation_error', async ([, body], { world }) => {
    const res = await world.call({ method: 'POST', url: POST.url, body });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });

  test('advanced must be true or false', async ({ world }) => {
    const res = await submit(world, { source: 'web' }, `${POST.url}?advanced=yes`);
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });
});

describe('GET /sdk/v1/measurements/{id}', () => {
  test('.happy returns the stored measurement in the envelope, with the POST request id', async ({ world }) => {
    const post = await submit(world, goodMeasurement({ userRef: 'u1' }));
    const res = await world.call({ url: `/sdk/v1/measurements/${json(post).data.id}` });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({ ok: true, data: json(post).data });
    expect(json(res).data.requestId).toBe(post.headers['x-request-id']);
    expect(res.headers['x-request-id']).not.toBe(post.headers['x-request-id']);
  });

  test('.happy include=assessment adds the assessment; without it there is none', async ({ world }) => {
    const id = json(await submit(world, goodMeasurement())).data.id;
    const plain = json(await world.call({ url: `/sdk/v1/measurements/${id}` })).data;
    expect(plain).not.toHaveProperty('assessment');
    const a = json(await world.call({ url: `/sdk/v1/measurements/${id}?include=assessment` })).data.assessment;
    expect(a).toMatchObject({ version: 1, status: 'assessed', basis: 'reference_only' });
    expect(a.metrics.map((m: any) => m.metric).sort()).toEqual(
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
    expect(a.disclaimers.length).toBeGreaterThan(0);
    expect(typeof a.summary).toBe('string');
  });

  test(".happy the assessment places each metric against the user's own corridor once there is a baseline", async ({
    world,
  }) => {
    for (let i = 0; i < 5; i++) {
      await submit(world, goodMeasurement({ userRef: 'u-a', cardiac: { heartRate: { value: 60 + i, unit: 'bpm' } } }));
      world.clock.advance(60_000);
    }
    // Median 62, MAD 1: corridor 60..64. 90 bpm is above it.
    const id = json(
      await submit(world, goodMeasurement({ userRef: 'u-a', cardiac: { heartRate: { value: 90, unit: 'bpm' } } })),
    ).data.id;
    const a = json(await world.call({ url: `/sdk/v1/measurements/${id}?include=assessment` })).data.assessment;
    expect(a.basis).toBe('baseline');
    const hr = a.metrics.find((m: any) => m.metric === 'heartRateBpm');
    expect(hr.personal).toMatchObject({ position: 'above' });
    expect(a.flags).toContain('heartRateBpm:above_personal_range');
  });

  test('.happy a poor measurement is not assessable', async ({ world }) => {
    const id = json(await submit(world, poorMeasurement())).data.id;
    const a = json(await world.call({ url: `/sdk/v1/measurements/${id}?include=assessment` })).data.assessment;
    expect(a).toMatchObject({ status: 'not_assessable', metrics: [] });
  });

  test('.happy a successful read is logged as success without a quality level', async ({ world }) => {
    const id = json(await submit(world, goodMeasurement())).data.id;
    world.clock.advance(1);
    await world.call({ url: `/sdk/v1/measurements/${id}?include=assessment` });
    const rows = await world.usageRows(world.key.keyId);
    expect(rows.map((r) => [r.method, r.endpoint, r.status, r.quality_level])).toEqual([
      ['POST', '/sdk/v1/measurements', 'success', 'good'],
      ['GET', `/sdk/v1/measurements/${id}`, 'success', null],
    ]);
  });

  test('.error an unknown id is a plain 404 and leaves no row', async ({ world }) => {
    const res = await world.call({ url: '/sdk/v1/measurements/meas_000000000000000000000000' });
    expect(res.statusCode).toBe(404);
    expect(json(res)).toEqual({ ok: false, error: { code: 'not_found', message: expect.any(String) } });
    expect(await world.usageRows(world.key.keyId)).toHaveLength(0);
  });

  test.for(['advanced=1', 'include=everything'])('.error query %s is 400 validation_error', async (q, { world }) => {
    const id = json(await submit(world, goodMeasurement())).data.id;
    const res = await world.call({ url: `/sdk/v1/measurements/${id}?${q}` });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });

  test('.security another key — even of the same organization — gets the same 404 as an unknown id', async ({
    world,
  }) => {
    const id = json(await submit(world, goodMeasurement())).data.id;
    const sibling = await world.newKey({ orgId: world.key.orgId });
    const stranger = await world.newKey();
    const unknown = await world.call({ url: '/sdk/v1/measurements/meas_ffffffffffffffffffffffff', key: sibling });
    for (const key of [sibling, stranger]) {
      const res = await world.call({ url: `/sdk/v1/measurements/${id}`, key });
      expect(res.statusCode).toBe(404);
      expect(res.body).toBe(unknown.body);
    }
    for (const key of [sibling, stranger]) {
      const res = await world.call({ url: `/sdk/v1/measurements/${id}?advanced=true&include=assessment`, key });
      expect(res.statusCode).toBe(404);
    }
  });

  test('.security the query string is outside the signature, the path is inside', async ({ world }) => {
    const id = json(await submit(world, goodMeasurement())).data.id;
    const res = await world.call({
      url: `/sdk/v1/measurements/${id}`,
      signPath: '/sdk/v1/measurements/meas_000000000000000000000000',
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('POST /sdk/v1/measurements .security (prototype poisoning)', () => {
  test.for([
    ['__proto__', '{"source":"web","__proto__":{"attested":true}}'],
    ['constructor.prototype', '{"source":"web","constructor":{"prototype":{"attested":true}}}'],
  ] as const)('a body with a %s key is refused 400 validation_error, nothing stored', async ([, text], { world }) => {
    const res = await world.call({ ...POST, body: text, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
    expect(({} as Record<string, unknown>).attested).toBeUndefined();
    const rows = await world.usageRows(world.key.keyId);
    expect(rows.filter((r) => r.status === 'success')).toHaveLength(0);
  });
});
