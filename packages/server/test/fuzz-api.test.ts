/**
 * Property-based fuzzing of what the HTTP API reads from strangers (issue 19): the NCS1 headers,
 * the JSON bodies of every signed JSON route, path parameters and queries (the usage-log cursor
 * among them), the webhook URL normalizer and the frames-file check. What must hold: an answer
 * from the error table with the status the table gives (or a success), with the envelope and a
 * request id; never a 5xx, never a throw that escapes. In-process (`inject`), one world, runs sized
 * so the file takes seconds.
 */
import net from 'node:net';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ERROR_STATUS, encodeFaceCrop, encodeFramesFile, isErrorCode } from '@vitals/protocol';
import { createWorld, goodMeasurement, type Body, type World } from './helpers.js';
import { checkWebhookUrl, isPublicAddress, normalizeHost, parseAllowList } from '../src/webhooks/ssrf.js';
import { checkFramesFile } from '../src/batch/frames.js';

let w: World;
beforeAll(async () => {
  w = await createWorld();
});
afterAll(() => w.close());

/** The wire rules every answer keeps, whatever was sent. */
function expectClean(res: LightMyRequestResponse): void {
  expect(res.statusCode).toBeLessThan(500);
  expect(String(res.headers['x-request-id'])).toMatch(/^req_[0-9a-f]{24}$/);
  const body = JSON.parse(res.body) as { ok: boolean; error?: { code: string; message: string } };
  if (body.ok) {
    expect(res.statusCode).toBeLessThan(300);
    return;
  }
  const code = body.error!.code;
  expect(isErrorCode(code)).toBe(true);
  expect(res.statusCode).toBe(ERROR_STATUS[code as keyof typeof ERROR_STATUS]);
  expect(body.error!.message).toEqual(expect.any(String));
}

/** A template with fields kept, dropped or replaced by any JSON; or any JSON; or any text or bytes. */
function bodyLike(tpl: Record<string, unknown>): fc.Arbitrary<Body> {
  const field = (v: unknown): fc.Arbitrary<unknown> =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(v) },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
      { weight: 1, arbitrary: fc.constant(undefined) },
    );
  const fields = fc.record(Object.fromEntries(Object.entries(tpl).map(([k, v]) => [k, field(v)])));
  const extra = fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
  return fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fields, extra).map(([f, e]) => ({ ...e, ...f }) as Body) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) as Body) },
    { weight: 1, arbitrary: fc.string({ maxLength: 300 }) as fc.Arbitrary<Body> },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }) as fc.Arbitrary<Body> },
  );
}

const ROUTES: Array<[string, Record<string, unknown>]> = [
  ['/sdk/v1/measurements', goodMeasurement({ userRef: 'fuzz-user-000001' })],
  ['/sdk/v1/cloud/sessions', { platform: 'web', durationSec: 30, consent: true, features: ['vitals'] }],
  ['/sdk/v1/cloud/uploads/presign', { kind: 'frames', contentType: 'application/octet-stream' }],
  [
    '/sdk/v1/cloud/jobs',
    {
      objectKey: 'up_00000000000000000000000000000000',
      kind: 'frames',
      sha256: '0'.repeat(64),
      idempotencyKey: 'fuzz-idempotency-0001',
      consent: true,
      webhookUrl: 'https://hooks.example.com/x',
    },
  ],
  ['/sdk/v1/auth/test', {}],
];

describe('signed JSON bodies', () => {
  test.each(ROUTES)('POST %s: any body is a success or a table refusal', async (url, tpl) => {
    await fc.assert(
      fc.asyncProperty(bodyLike(tpl), async (body) => {
        expectClean(await w.call({ method: 'POST', url, body }));
      }),
      { numRuns: 60 },
    );
  });
});

/** Text a header, a path segment or a query value may carry after encoding. */
const text = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: fc.constantFrom(...'0123456789.-_abcdefklgop:/%+ '.split('')), maxLength: 40 }),
);

describe('paths and queries', () => {
  const paths: Array<[string, (s: string) => string]> = [
    ['measurement id', (s) => `/sdk/v1/measurements/${encodeURIComponent(s)}`],
    [
      'measurement query',
      (s) => `/sdk/v1/measurements/meas_000000000000000000000000?advanced=${encodeURIComponent(s)}`,
    ],
    ['job id', (s) => `/sdk/v1/cloud/jobs/${encodeURIComponent(s)}`],
    ['user ref', (s) => `/sdk/v1/users/${encodeURIComponent(s)}/measurements`],
    ['baseline', (s) => `/sdk/v1/users/${encodeURIComponent(s)}/baseline`],
    ['users paging', (s) => `/sdk/v1/users?page=${encodeURIComponent(s)}&perPage=${encodeURIComponent(s)}`],
    ['usage-log cursor', (s) => `/sdk/v1/logs?cursor=${encodeURIComponent(s)}`],
    ['usage-log limit', (s) => `/sdk/v1/logs?limit=${encodeURIComponent(s)}`],
  ];
  test.each(paths)('GET with any %s', async (_name, url) => {
    await fc.assert(
      fc.asyncProperty(text, async (s) => {
        w.clock.advance(1_001); // under the usage log's own 60 reads a minute
        expectClean(await w.call({ url: url(s) }));
      }),
      { numRuns: 60 },
    );
  });

  test('a well-formed cursor is answered 200, any other 400 validation_error', async () => {
    const cursor = fc.oneof(
      fc
        .tuple(
          fc.nat(),
          fc.string({ unit: fc.constantFrom(...'0123456789abcdef'.split('')), minLength: 24, maxLength: 24 }),
        )
        .map(([t, h]) => `${t}.log_${h}`),
      text,
    );
    await fc.assert(
      fc.asyncProperty(cursor, async (c) => {
        w.clock.advance(1_001);
        const res = await w.call({ url: `/sdk/v1/logs?cursor=${encodeURIComponent(c)}` });
        expectClean(res);
        const wellFormed = /^\d{1,15}\.log_[0-9a-f]{24}$/.test(c);
        expect(res.statusCode).toBe(wellFormed ? 200 : 400);
      }),
      { numRuns: 100 },
    );
  });
});

describe('NCS1 headers', () => {
  test('any value of any of the four headers is a success or a signature refusal', async () => {
    const headerValue = fc.oneof(
      fc.constant(undefined),
      fc.string({ unit: fc.constantFrom(...'0123456789abcdefkey_=+/-. '.split('')), maxLength: 60 }),
      fc.string({ unit: 'grapheme-ascii', maxLength: 200 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
    );
    const names = fc.subarray(['x-key-id', 'x-timestamp', 'x-nonce', 'x-signature'], { minLength: 1 });
    await fc.assert(
      fc.asyncProperty(names, fc.array(headerValue, { minLength: 4, maxLength: 4 }), async (changed, values) => {
        // A new minute every call: the per-address throttle of refusals is tested on its own.
        w.clock.advance(60_001);
        const headers = Object.fromEntries(changed.map((n, i) => [n, values[i]]));
        const res = await w.call({ method: 'POST', url: '/sdk/v1/auth/test', headers });
        expectClean(res);
        expect([200, 401, 403]).toContain(res.statusCode);
      }),
      { numRuns: 150 },
    );
  });
});

describe('webhook URL normalizer', () => {
  const none = parseAllowList([]);
  const label = fc.oneof(
    fc.domain(),
    fc.constantFrom(
      'localhost',
      'LOCALHOST',
      'LocalHost',
      'xn--nxasmq6b',
      'b\u00fccher',
      '127.1',
      '0x7f.1',
      '2130706433',
    ),
    fc.ipV4(),
    fc.ipV4Extended(),
    fc.ipV6().map((a) => `[${a}]`),
  );
  const url = fc.oneof(
    fc.webUrl(),
    fc
      .tuple(
        fc.constantFrom('https://', 'HTTPS://', 'https:', 'https:/', 'https:///', 'https:\\\\', ' https://', 'http://'),
        label,
        fc.constantFrom('', '.', '..', '...'),
        fc.constantFrom('', ':443', ':8443', ':0'),
        fc.constantFrom('/', '/x?y=1', '', '#f'),
      )
      .map((parts) => parts.join('')),
    fc.string({ maxLength: 100 }),
  );

  test('never throws; what it accepts is https, normalized, stable, and names no loopback or private host', () => {
    fc.assert(
      fc.property(url, (raw) => {
        const r = checkWebhookUrl(raw, none);
        if (!r.ok) {
          expect(r.reason).toMatch(/^webhookUrl /);
          return;
        }
        expect(r.url.protocol).toBe('https:');
        const host = r.url.hostname;
        expect(host).toBe(host.toLowerCase());
        expect(host.endsWith('.')).toBe(false);
        expect(host === 'localhost' || host.endsWith('.localhost')).toBe(false);
        const bare = host.replace(/^\[(.*)\]$/, '$1');
        expect(normalizeHost(host)).toBe(bare);
        if (net.isIP(bare)) expect(isPublicAddress(bare)).toBe(true);
        // Normalizing again changes nothing.
        const again = checkWebhookUrl(r.url.href, none);
        expect(again.ok && again.url.href).toBe(r.url.href);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('frames file check (batch worker)', () => {
  const crop = (t: number) => encodeFaceCrop({ seq: t, tMicros: t * 33_333, pixels: new Uint8Array(3888) });
  const file = encodeFramesFile([crop(0), crop(1), crop(2)], 30_000_000);
  test('any bytes are a checked file or an "invalid frames file" refusal', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2048 }),
      fc.array(fc.tuple(fc.nat(file.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }).chain((flips) =>
        fc.integer({ min: 0, max: file.length }).map((cut) => {
          const out = file.slice(0, cut);
          for (const [i, v] of flips) if (i < out.length) out[i] = v;
          return out;
        }),
      ),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        const r = checkFramesFile(b);
        if (!r.ok) expect(r.message).toMatch(/^invalid frames file: /);
      }),
      { numRuns: 1500 },
    );
  });
});
