/**
 * Test harness (STYLE habit 10): every test owns its world — its own app and database, its own
 * organization and key, and a ManualClock it moves by hand. Requests are signed exactly as a client
 * signs them (protocol `signRequest`: path without query, the exact body bytes sent).
 */
import { test as base } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { signRequest, randomHex } from '@vitals/protocol';
import { createTestApp, ManualClock, type TestApp, type TestKey, type TestKeyOptions } from '../src/testing.js';

export type Body = string | Uint8Array | Record<string, unknown> | unknown[] | undefined;

export interface SignedInjectOptions {
  method?: string;
  url: string;
  /** An object is sent as JSON; a string or bytes are sent as they are. */
  body?: Body;
  /** Replaces or (with `undefined`) removes headers after signing. */
  headers?: Record<string, string | undefined>;
  /** Unix seconds; defaults to the system clock. */
  timestamp?: number;
  nonce?: string;
  /** Signs another body than the one sent (to prove the body is covered). */
  signBody?: Body;
  /** Signs another path than the one requested. */
  signPath?: string;
  /** Signs with another secret. */
  signSecret?: string;
}

function bytesOf(body: Body): { payload: string | Buffer | undefined; contentType?: string } {
  if (body === undefined) return { payload: undefined };
  if (typeof body === 'string') return { payload: body, contentType: 'application/json' };
  if (body instanceof Uint8Array) return { payload: Buffer.from(body), contentType: 'application/octet-stream' };
  return { payload: JSON.stringify(body), contentType: 'application/json' };
}

/** Injects a request signed with NCS1 by `key`. */
export async function signedInject(
  app: FastifyInstance,
  key: TestKey,
  opts: SignedInjectOptions,
): Promise<LightMyRequestResponse> {
  const method = (opts.method ?? 'GET').toUpperCase();
  const sent = bytesOf(opts.body);
  const signed = opts.signBody === undefined ? sent : bytesOf(opts.signBody);
  const sigHeaders = await signRequest({
    keyId: key.keyId,
    secret: opts.signSecret ?? key.secret,
    method,
    path: opts.signPath ?? opts.url,
    body:
      signed.payload === undefined
        ? undefined
        : typeof signed.payload === 'string'
          ? signed.payload
          : new Uint8Array(signed.payload),
    timestamp: opts.timestamp ?? Math.floor(Date.now() / 1000),
    nonce: opts.nonce ?? randomHex(16),
  });
  const headers: Record<string, string> = { ...sigHeaders };
  if (sent.contentType) headers['content-type'] = sent.contentType;
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === undefined) delete headers[k.toLowerCase()];
    else headers[k.toLowerCase()] = v;
  }
  return app.inject({ method: method as any, url: opts.url, headers, payload: sent.payload });
}

export interface World {
  t: TestApp;
  app: FastifyInstance;
  clock: ManualClock;
  key: TestKey;
  /** Signed request by the world's key, timestamped by the world's clock. */
  call(opts: SignedInjectOptions & { key?: TestKey }): Promise<LightMyRequestResponse>;
  newKey(opts?: TestKeyOptions): Promise<TestKey>;
  /** Usage rows of a key straight from the store (for keys nobody can sign for). */
  usageRows(keyId: string | null): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

export const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

export async function createWorld(
  opts: {
    keyOptions?: TestKeyOptions;
    env?: Record<string, string>;
    now?: number;
    logger?: Record<string, unknown>;
  } = {},
): Promise<World> {
  const clock = new ManualClock(opts.now ?? T0);
  const t = await createTestApp({ clock, env: opts.env, logger: opts.logger });
  const key = await t.createKey(opts.keyOptions);
  const world: World = {
    t,
    app: t.app,
    clock,
    key,
    call: ({ key: k, ...o }) =>
      signedInject(t.app, k ?? key, { ...o, timestamp: o.timestamp ?? Math.floor(clock.now() / 1000) }),
    newKey: (o) => t.createKey(o),
    async usageRows(keyId) {
      let q = t.ctx.db.db.selectFrom('usage_log').selectAll();
      q = keyId === null ? q.where('key_id', 'is', null) : q.where('key_id', '=', keyId);
      return q.orderBy('time').orderBy('id').execute() as any;
    },
    close: () => t.close(),
  };
  return world;
}

/** `test` with a fresh world per test: `test('...', async ({ world }) => ...)`. */
export const test = base.extend<{ world: World }>({
  // eslint-disable-next-line no-empty-pattern
  world: async ({}, use) => {
    const w = await createWorld();
    await use(w);
    await w.close();
  },
});

export const json = (res: LightMyRequestResponse): any => JSON.parse(res.body);

/** How many measurements the world's store holds (every key). */
export const countMeasurements = async (w: World): Promise<number> =>
  Number(
    (
      await w.t.ctx.db.db
        .selectFrom('measurements')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A complete good-quality on-device measurement body. */
export function goodMeasurement(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: 'web',
    durationSec: 60,
    isComplete: true,
    quality: { level: 'good', score: 0.9, usable: true },
    cardiac: { heartRate: { value: 72, unit: 'bpm', confidence: 0.9 } },
    hrv: { sdnnMs: 50, rmssdMs: 40, pnn50Pct: 20 },
    respiratory: { breathingRate: { value: 14, unit: 'brpm' } },
    stress: { index: 120, level: 'low', unit: 'index' },
    bloodPressure: { systolicMmHg: 118, diastolicMmHg: 76, unit: 'mmHg', confidence: 0.6, tier: 'beta' },
    spo2: { value: 98, unit: '%', confidence: 0.7, tier: 'beta' },
    ...over,
  };
}

export function poorMeasurement(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: 'web',
    durationSec: 60,
    isComplete: false,
    quality: { level: 'poor', score: 0.1, usable: false },
    cardiac: { heartRate: null },
    hrv: null,
    respiratory: { breathingRate: null },
    stress: null,
    bloodPressure: null,
    spo2: null,
    ...over,
  };
}
