/**
 * The signature layer (spec: Authentication, "Request signing"; Errors, usage-log vocabulary;
 * CLARIFICATIONS 2, 3, 8, 9, 13). Every rejection is asserted on the wire (status, error.code,
 * headers) and in the usage log (errorCode, every field present).
 */
import { describe, expect } from 'vitest';
import { USAGE_ERROR_CODES, ID_PATTERNS, SIGNATURE_WINDOW_SEC } from '@vitals/protocol';
import {
  createWorld,
  goodMeasurement,
  json,
  signedInject,
  test,
  type SignedInjectOptions,
  type World,
} from './helpers.js';
import { buildServer } from '../src/server.js';
import { createContext } from '../src/deps.js';
import { setKeyStatus } from '../src/store/orgs-keys.js';
import { verifyNcs1 } from '../src/auth/signature.js';
import { openTestDatabase, makeKey } from '../src/testing.js';
import { loadConfig } from '../src/config.js';
import { ManualClock } from '../src/clock.js';

const AUTH_TEST = { method: 'POST', url: '/sdk/v1/auth/test' } as const;
const USAGE_FIELDS = [
  'id',
  'time',
  'endpoint',
  'method',
  'status',
  'latencyMs',
  'requestId',
  'error',
  'errorCode',
  'qualityLevel',
];

async function logsOf(w: World, keyId: string | null = w.key.keyId): Promise<any[]> {
  const rows = await w.usageRows(keyId);
  return rows;
}

/** Reads the key's usage log through the API (rows as the wire shows them). */
async function wireLog(w: World): Promise<any[]> {
  const res = await w.call({ url: '/sdk/v1/logs?limit=200' });
  expect(res.statusCode).toBe(200);
  return json(res).data.items;
}

describe('signature layer .happy', () => {
  test('a correctly signed call is accepted and logged as success with every field', async ({ world }) => {
    const res = await world.call(AUTH_TEST);
    expect(res.statusCode).toBe(200);
    const rows = await wireLog(world);
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(Object.keys(row).sort()).toEqual([...USAGE_FIELDS].sort());
    expect(row).toMatchObject({
      time: world.clock.now(),
      endpoint: '/sdk/v1/auth/test',
      method: 'POST',
      status: 'success',
      requestId: res.headers['x-request-id'],
      error: null,
      errorCode: null,
      qualityLevel: null,
    });
    expect(row.id).toMatch(ID_PATTERNS.log);
    expect(Number.isInteger(row.latencyMs)).toBe(true);
  });

  test('a POST body is covered by the signature: the exact bytes sent verify', async ({ world }) => {
    // Unusual but valid JSON spacing: the server must hash the bytes, not a re-serialisation.
    const body = '{ "source" :"web",\n  "durationSec": 60 }';
    const res = await world.call({ method: 'POST', url: '/sdk/v1/measurements', body });
    expect(res.statusCode).toBe(201);
  });

  test('the query string is not signed: the path alone is', async ({ world }) => {
    const res = await world.call({ url: '/sdk/v1/logs?limit=5&sinceTime=0', signPath: '/sdk/v1/logs' });
    expect(res.statusCode).toBe(200);
  });

  test.for([
    ['8 characters', 'n'.repeat(8)],
    ['128 characters', 'n'.repeat(128)],
  ])('a nonce of %s is accepted', async ([, nonce], { world }) => {
    expect((await world.call({ ...AUTH_TEST, nonce })).statusCode).toBe(200);
  });

  test.for([-SIGNATURE_WINDOW_SEC, SIGNATURE_WINDOW_SEC, 0])(
    'a timestamp %i s from the server clock is accepted',
    async (skew, { world }) => {
      const ts = Math.floor(world.clock.now() / 1000) + skew;
      expect((await world.call({ ...AUTH_TEST, timestamp: ts })).statusCode).toBe(200);
    },
  );
});

describe('signature layer .error: every rejection, its status and its log code', () => {
  type Case = {
    name: string;
    status: number;
    code: string;
    logCode: (typeof USAGE_ERROR_CODES)[number];
    /** Prepares the world and returns the request to send. */
    arrange: (
      w: World,
    ) => Promise<SignedInjectOptions & { key?: World['key'] }> | (SignedInjectOptions & { key?: World['key'] });
    /**
     * Key whose log holds the row. Defaults to the world's key. null: the call named no key, so it
     * is counted per address and hour instead (issue 19; auth_rejections), never logged as a row.
     */
    logKey?: (w: World, req: any) => string | null;
  };
  const now = (w: World) => Math.floor(w.clock.now() / 1000);
  const cases: Case[] = [
    ...(['x-key-id', 'x-timestamp', 'x-nonce', 'x-signature'] as const).map<Case>((h) => ({
      name: `missing ${h}`,
      status: 401,
      code: 'unauthorized',
      logCode: 'missing_credentials',
      arrange: () => ({ ...AUTH_TEST, headers: { [h]: undefined } }),
      logKey: (w) => (h === 'x-key-id' ? null : w.key.keyId),
    })),
    {
      name: 'nonce of 7 characters',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_nonce',
      arrange: () => ({ ...AUTH_TEST, nonce: 'n'.repeat(7) }),
    },
    {
      name: 'nonce of 129 characters',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_nonce',
      arrange: () => ({ ...AUTH_TEST, nonce: 'n'.repeat(129) }),
    },
    {
      name: 'timestamp not a number',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_timestamp',
      arrange: () => ({ ...AUTH_TEST, headers: { 'x-timestamp': 'yesterday' } }),
    },
    {
      name: 'timestamp with a fraction',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_timestamp',
      arrange: (w) => ({ ...AUTH_TEST, headers: { 'x-timestamp': `${now(w)}.5` } }),
    },
    {
      name: 'timestamp in milliseconds',
      status: 401,
      code: 'unauthorized',
      logCode: 'timestamp_out_of_window',
      arrange: (w) => ({ ...AUTH_TEST, timestamp: w.clock.now() }),
    },
    {
      name: 'timestamp 301 s in the past',
      status: 401,
      code: 'unauthorized',
      logCode: 'timestamp_out_of_window',
      arrange: (w) => ({ ...AUTH_TEST, timestamp: now(w) - 301 }),
    },
    {
      name: 'timestamp 301 s in the future',
      status: 401,
      code: 'unauthorized',
      logCode: 'timestamp_out_of_window',
      arrange: (w) => ({ ...AUTH_TEST, timestamp: now(w) + 301 }),
    },
    {
      name: 'unknown key id',
      status: 401,
      code: 'unauthorized',
      logCode: 'unknown_key',
      arrange: (w) => ({ ...AUTH_TEST, key: { ...w.key, keyId: 'key_000000000000000000000000' } }),
      logKey: () => null,
    },
    {
      name: 'disabled key',
      status: 403,
      code: 'key_disabled',
      logCode: 'key_disabled',
      arrange: async (w) => {
        await setKeyStatus(w.t.ctx.db.db, w.key.keyId, 'disabled');
        w.t.ctx.keys.invalidate();
        return AUTH_TEST;
      },
    },
    {
      name: 'expired key (CLARIFICATIONS 2: 401, log key_expired)',
      status: 401,
      code: 'unauthorized',
      logCode: 'key_expired',
      arrange: async (w) => {
        const key = await w.newKey({ expiresAt: w.clock.now() - 1 });
        return { ...AUTH_TEST, key };
      },
      logKey: (_w, req) => req.key.keyId,
    },
    {
      name: 'signed with another secret',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_signature',
      arrange: () => ({ ...AUTH_TEST, signSecret: 'sk_not_the_secret' }),
    },
    {
      name: 'body changed after signing',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_signature',
      arrange: () => ({
        method: 'POST',
        url: '/sdk/v1/measurements',
        body: { source: 'web', durationSec: 61 },
        signBody: { source: 'web', durationSec: 60 },
      }),
    },
    {
      name: 'path changed after signing',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_signature',
      arrange: () => ({ ...AUTH_TEST, signPath: '/sdk/v1/auth/other' }),
    },
    {
      name: 'timestamp header changed after signing',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_signature',
      arrange: (w) => ({ ...AUTH_TEST, headers: { 'x-timestamp': String(now(w) - 1) } }),
    },
    {
      name: 'nonce header changed after signing',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_signature',
      arrange: () => ({ ...AUTH_TEST, nonce: 'aaaaaaaaaaaa', headers: { 'x-nonce': 'bbbbbbbbbbbb' } }),
    },
    {
      name: 'signature not base64 at all',
      status: 401,
      code: 'unauthorized',
      logCode: 'invalid_signature',
      arrange: () => ({ ...AUTH_TEST, headers: { 'x-signature': '!!!' } }),
    },
  ];

  test.for(cases)('$name → $status $code, log $logCode', async (c, { world }) => {
    const req = await c.arrange(world);
    const res = await world.call(req);
    expect(res.statusCode).toBe(c.status);
    expect(json(res)).toEqual({ ok: false, error: { code: c.code, message: expect.any(String) } });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    const logKey = c.logKey ? c.logKey(world, req) : world.key.keyId;
    const counted = await world.t.ctx.db.db.selectFrom('auth_rejections').selectAll().execute();
    if (logKey === null) {
      expect(await world.t.ctx.db.db.selectFrom('usage_log').selectAll().execute()).toEqual([]);
      expect(counted).toMatchObject([{ address: '127.0.0.1', key_id: '', error_code: c.logCode, count: 1 }]);
      return;
    }
    expect(counted).toEqual([]);
    const rows = await logsOf(world, logKey);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'unauthorized',
      error_code: c.logCode,
      endpoint: req.url.split('?')[0],
      method: req.method ?? 'GET',
      request_id: res.headers['x-request-id'],
      time: world.clock.now(),
      quality_level: null,
    });
    expect(typeof rows[0].error).toBe('string');
  });

  test('a reused nonce is rejected (nonce_reused) and the first call stands', async ({ world }) => {
    const first = await world.call({ ...AUTH_TEST, nonce: 'same-nonce-123' });
    expect(first.statusCode).toBe(200);
    world.clock.advance(1); // rows of one millisecond are ordered by their random ids
    const again = await world.call({ ...AUTH_TEST, nonce: 'same-nonce-123' });
    expect(again.statusCode).toBe(401);
    expect(json(again).error.code).toBe('unauthorized');
    const rows = await wireLog(world);
    expect(rows.map((r) => [r.status, r.errorCode])).toEqual([
      ['success', null],
      ['unauthorized', 'nonce_reused'],
    ]);
  });

  test('the same signed request replayed byte for byte is rejected', async ({ world }) => {
    const opts = {
      method: 'POST',
      url: '/sdk/v1/measurements',
      body: goodMeasurement(),
      nonce: 'replay-me-please',
      timestamp: Math.floor(world.clock.now() / 1000),
    };
    expect((await signedInject(world.app, world.key, opts)).statusCode).toBe(201);
    const replay = await signedInject(world.app, world.key, opts);
    expect(replay.statusCode).toBe(401);
    const count = await world.t.ctx.db.db
      .selectFrom('measurements')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  test('a nonce is per key: another key may use the same nonce', async ({ world }) => {
    const other = await world.newKey();
    expect((await world.call({ ...AUTH_TEST, nonce: 'shared-nonce-1' })).statusCode).toBe(200);
    expect((await world.call({ ...AUTH_TEST, nonce: 'shared-nonce-1', key: other })).statusCode).toBe(200);
  });

  test('a rejected signature does not spend the nonce', async ({ world }) => {
    expect((await world.call({ ...AUTH_TEST, nonce: 'nonce-after-bad', signSecret: 'wrong' })).statusCode).toBe(401);
    expect((await world.call({ ...AUTH_TEST, nonce: 'nonce-after-bad' })).statusCode).toBe(200);
  });

  test('an unsigned call to a signed path is 401 too, counted for its address, not logged as a row', async ({
    world,
  }) => {
    const res = await world.app.inject({ method: 'GET', url: '/sdk/v1/users' });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.code).toBe('unauthorized');
    expect(await logsOf(world, null)).toHaveLength(0);
    const counted = await world.t.ctx.db.db.selectFrom('auth_rejections').selectAll().execute();
    expect(counted).toMatchObject([{ error_code: 'missing_credentials', key_id: '', count: 1 }]);
  });
});

describe('signature layer .security', () => {
  test("a stranger's garbage body is 401, never 400: JSON is parsed only after the signature", async ({ world }) => {
    const res = await world.call({
      method: 'POST',
      url: '/sdk/v1/measurements',
      body: '{not json',
      signSecret: 'sk_wrong',
    });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.code).toBe('unauthorized');
  });

  test('a signed garbage body is 400 validation_error and leaves no row', async ({ world }) => {
    const res = await world.call({ method: 'POST', url: '/sdk/v1/measurements', body: '{not json' });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
    expect(await logsOf(world)).toHaveLength(0);
  });

  test.for(['text/plain', 'application/x-www-form-urlencoded', undefined])(
    'a signed body sent as %s verifies, then is 400 validation_error (not JSON)',
    async (type, { world }) => {
      const res = await world.call({
        method: 'POST',
        url: '/sdk/v1/measurements',
        body: '{"source":"web"}',
        headers: { 'content-type': type },
      });
      expect(res.statusCode).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
      expect(await logsOf(world)).toHaveLength(0);
    },
  );

  test('the body limit (2 MB) answers 413 payload_too_large', async ({ world }) => {
    const big = JSON.stringify({ source: 'web', pad: 'x'.repeat(2 * 1024 * 1024) });
    const res = await world.call({ method: 'POST', url: '/sdk/v1/measurements', body: big });
    expect(res.statusCode).toBe(413);
    expect(json(res).error.code).toBe('payload_too_large');
  });

  test('the secret is stored only as its SHA-256', async ({ world }) => {
    const row = await world.t.ctx.db.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', world.key.keyId)
      .executeTakeFirstOrThrow();
    const { createHash } = await import('node:crypto');
    expect(row.secret_sha256).toBe(createHash('sha256').update(world.key.secret).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(world.key.secret);
  });

  test('skew is measured against the injected clock at the ±300 s boundary, both ways', async ({ world }) => {
    const ts = Math.floor(world.clock.now() / 1000);
    world.clock.advance(300_000);
    expect((await world.call({ ...AUTH_TEST, timestamp: ts })).statusCode).toBe(200);
    world.clock.advance(1_000);
    expect((await world.call({ ...AUTH_TEST, timestamp: ts })).statusCode).toBe(401);
    world.clock.advance(-602_000);
    expect((await world.call({ ...AUTH_TEST, timestamp: ts })).statusCode).toBe(401);
    world.clock.advance(1_000);
    expect((await world.call({ ...AUTH_TEST, timestamp: ts })).statusCode).toBe(200);
    // Rows come back in time order: -301 s, -300 s, +300 s, +301 s.
    const codes = (await wireLog(world)).map((r) => r.errorCode);
    expect(codes).toEqual(['timestamp_out_of_window', null, null, 'timestamp_out_of_window']);
  });

  test('a key that expires while in use is refused from its expiry on', async ({ world }) => {
    const key = await world.newKey({ expiresAt: world.clock.now() + 60_000 });
    expect((await world.call({ ...AUTH_TEST, key })).statusCode).toBe(200);
    world.clock.advance(60_000);
    const res = await world.call({ ...AUTH_TEST, key });
    expect(res.statusCode).toBe(401);
    expect((await logsOf(world, key.keyId)).map((r) => r.error_code)).toEqual([null, 'key_expired']);
  });

  test('operator disable takes effect within a second without any cache invalidation', async ({ world }) => {
    const { vi } = await import('vitest');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      expect((await world.call(AUTH_TEST)).statusCode).toBe(200);
      // As the CLI does it: straight into the store, from outside the serving process.
      await setKeyStatus(world.t.ctx.db.db, world.key.keyId, 'disabled');
      vi.advanceTimersByTime(1001);
      const res = await world.call(AUTH_TEST);
      expect(res.statusCode).toBe(403);
      expect(json(res).error.code).toBe('key_disabled');
      await setKeyStatus(world.t.ctx.db.db, world.key.keyId, 'active');
      vi.advanceTimersByTime(1001);
      expect((await world.call(AUTH_TEST)).statusCode).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('server-side verification (node:crypto) agrees with the protocol vectors', () => {
  // The literal vector of packages/protocol/test/ncs1.test.ts.
  const keyHex = '6f752b7237c6e81c9f1fdf06e58fb8ed22cbe0f51ef7eeb5a4b8dd0003d089af';
  const body = Buffer.from('{"source":"web","durationSec":60}');
  const sig = '08nt592HlYIcC1EYTeevsk9Gvt9sV+2JeIgaKG4kzMY=';
  test('accepts the vector, query ignored', () => {
    expect(
      verifyNcs1(keyHex, 'POST', '/sdk/v1/measurements?advanced=true', '1700000000', 'nonce-0123456789', body, sig),
    ).toBe(true);
  });
  test.for([
    [
      'signature of the raw-digest key',
      [
        keyHex,
        'POST',
        '/sdk/v1/measurements',
        '1700000000',
        'nonce-0123456789',
        body,
        'mM36sPeV2u9mY34KSeeOhScdBwLcf0Z2BEgNHaTNH80=',
      ],
    ],
    [
      'another body',
      [keyHex, 'POST', '/sdk/v1/measurements', '1700000000', 'nonce-0123456789', Buffer.from('{}'), sig],
    ],
    ['no body', [keyHex, 'POST', '/sdk/v1/measurements', '1700000000', 'nonce-0123456789', undefined, sig]],
    [
      'a signature without padding',
      [keyHex, 'POST', '/sdk/v1/measurements', '1700000000', 'nonce-0123456789', body, sig.slice(0, -1)],
    ],
  ] as const)('refuses %s', ([, args]) => {
    expect(verifyNcs1(...(args as unknown as Parameters<typeof verifyNcs1>))).toBe(false);
  });
});

describe('nonce replay across processes', () => {
  test('two app instances on one database share spent nonces', async () => {
    const store = await openTestDatabase();
    const config = loadConfig({ VITALS_DATA_DIR: store.dataDir });
    const clock = new ManualClock(Date.now());
    const ctxA = await createContext(config, { clock, db: store.db });
    const ctxB = await createContext(config, { clock, db: store.db, migrate: false });
    const a = (await buildServer(ctxA)).app;
    const b = (await buildServer(ctxB)).app;
    try {
      const key = await makeKey(ctxA);
      const opts = {
        method: 'POST',
        url: '/sdk/v1/auth/test',
        nonce: 'cross-process-1',
        timestamp: Math.floor(clock.now() / 1000),
      };
      expect((await signedInject(a, key, opts)).statusCode).toBe(200);
      clock.advance(1);
      const replay = await signedInject(b, key, opts);
      expect(replay.statusCode).toBe(401);
      const rows = await store.db.db
        .selectFrom('usage_log')
        .selectAll()
        .where('key_id', '=', key.keyId)
        .orderBy('time')
        .execute();
      expect(rows.map((r) => r.error_code)).toEqual([null, 'nonce_reused']);
    } finally {
      await a.close();
      await b.close();
      await store.cleanup();
    }
  });
});

describe('rate limits', () => {
  test('rateLimitPerMin: the call over the limit is 429 with integer RateLimit-* headers and a rate_limited row', async () => {
    const w = await createWorld({ keyOptions: { rateLimitPerMin: 3 } });
    try {
      for (let i = 0; i < 3; i++) expect((await w.call(AUTH_TEST)).statusCode).toBe(200);
      w.clock.advance(20_000);
      const res = await w.call(AUTH_TEST);
      expect(res.statusCode).toBe(429);
      expect(json(res).error.code).toBe('rate_limited');
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe('0');
      expect(res.headers['ratelimit-reset']).toBe('40');
      const rows = await logsOf(w);
      expect(rows.map((r) => [r.status, r.error_code])).toEqual([
        ['success', null],
        ['success', null],
        ['success', null],
        ['rate_limited', 'rate_limited'],
      ]);
      // A fixed window of 60 s: a minute after the first call the counter starts again.
      w.clock.advance(40_000);
      expect((await w.call(AUTH_TEST)).statusCode).toBe(200);
    } finally {
      await w.close();
    }
  });

  test('rateLimitPerMin applies to every signed path, the logs endpoint included (CLARIFICATIONS 3)', async () => {
    const w = await createWorld({ keyOptions: { rateLimitPerMin: 2 } });
    try {
      expect((await w.call({ method: 'POST', url: '/sdk/v1/measurements', body: goodMeasurement() })).statusCode).toBe(
        201,
      );
      expect((await w.call({ url: '/sdk/v1/users' })).statusCode).toBe(200);
      const res = await w.call({ url: '/sdk/v1/logs' });
      expect(res.statusCode).toBe(429);
      expect(res.headers['ratelimit-limit']).toBe('2');
    } finally {
      await w.close();
    }
  });

  test('rateLimitPerMin 0 (the default) is off', async ({ world }) => {
    for (let i = 0; i < 80; i++) expect((await world.call(AUTH_TEST)).statusCode).toBe(200);
  });

  test('the logs endpoint has its own 60 per minute, counted apart from other paths', async ({ world }) => {
    for (let i = 0; i < 5; i++) expect((await world.call(AUTH_TEST)).statusCode).toBe(200);
    for (let i = 0; i < 60; i++) expect((await world.call({ url: '/sdk/v1/logs' })).statusCode).toBe(200);
    const res = await world.call({ url: '/sdk/v1/logs' });
    expect(res.statusCode).toBe(429);
    expect(json(res).error.code).toBe('rate_limited');
    expect(res.headers['ratelimit-limit']).toBe('60');
    expect(res.headers['ratelimit-remaining']).toBe('0');
    expect(Number.isInteger(Number(res.headers['ratelimit-reset']))).toBe(true);
    // Other paths are not affected by the logs limit.
    expect((await world.call(AUTH_TEST)).statusCode).toBe(200);
    const rows = await logsOf(world);
    // Successful log reads are not logged; the refused one is.
    expect(rows.filter((r) => r.endpoint === '/sdk/v1/logs').map((r) => [r.status, r.error_code])).toEqual([
      ['rate_limited', 'rate_limited'],
    ]);
    world.clock.advance(60_000);
    expect((await world.call({ url: '/sdk/v1/logs' })).statusCode).toBe(200);
  });

  test('a rate limit is per key', async () => {
    const w = await createWorld({ keyOptions: { rateLimitPerMin: 1 } });
    try {
      const other = await w.newKey({ orgId: w.key.orgId, rateLimitPerMin: 1 });
      expect((await w.call(AUTH_TEST)).statusCode).toBe(200);
      expect((await w.call(AUTH_TEST)).statusCode).toBe(429);
      expect((await w.call({ ...AUTH_TEST, key: other })).statusCode).toBe(200);
    } finally {
      await w.close();
    }
  });
});

describe('usage-log vocabulary', () => {
  test('this suite produces all ten errorCodes and no others exist', () => {
    expect([...USAGE_ERROR_CODES].sort()).toEqual(
      [
        'missing_credentials',
        'invalid_nonce',
        'invalid_timestamp',
        'timestamp_out_of_window',
        'unknown_key',
        'key_disabled',
        'key_expired',
        'invalid_signature',
        'nonce_reused',
        'rate_limited',
      ].sort(),
    );
  });
});
