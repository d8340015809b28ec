/**
 * POST /sdk/v1/cloud/sessions (spec: POST /sdk/v1/cloud/sessions, Session; CLARIFICATIONS 7, 20):
 * validation codes, quota refusals, features baked into the token, the pending job.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signRequest, type FEATURES } from '@vitals/protocol';
import { createTestApp, type TestApp, type TestKey } from '../src/testing.js';
import { verifySessionToken } from '../src/domain/session-token.js';
import { getJob } from '../src/store/jobs.js';
import { jobToWire } from '../src/domain/jobs.js';
import { addMonthUsage, monthOf } from '../src/store/metering.js';

let t: TestApp;
let key: TestKey;
beforeAll(async () => {
  t = await createTestApp({ env: { VITALS_PUBLIC_URL: 'https://vitals.example.com/' } });
  key = await t.createKey();
});
afterAll(() => t.close());

async function post(body: unknown, k: TestKey = key) {
  const text = JSON.stringify(body);
  const headers = await signRequest({
    keyId: k.keyId,
    secret: k.secret,
    method: 'POST',
    path: '/sdk/v1/cloud/sessions',
    body: text,
    timestamp: Math.floor(t.clock.now() / 1000),
  });
  const res = await t.app.inject({
    method: 'POST',
    url: '/sdk/v1/cloud/sessions',
    headers: { ...headers, 'content-type': 'application/json' },
    payload: text,
  });
  return { status: res.statusCode, json: res.json() };
}

const OK = { platform: 'web', durationSec: 60, consent: true };

describe('happy path', () => {
  test('201 with the session object; the session is a pending stream job', async () => {
    const r = await post({ ...OK, userRef: 'u-1', clientRef: 'order-7' });
    expect(r.status).toBe(201);
    expect(Object.keys(r.json)).toEqual(['ok', 'data']);
    const d = r.json.data;
    expect(d.sessionId).toMatch(/^cj_[0-9a-f]{24}$/);
    expect(d.wsUrl).toBe('wss://vitals.example.com/sdk/v1/cloud/stream');
    expect(d.maxDurationSec).toBe(60);
    expect(d.frameSpec).toMatchObject({
      padRatio: 0,
      width: 36,
      height: 36,
      channels: 3,
      layout: 'NHWC',
      pixelFormat: 'rgb24',
      maxFps: 32,
      packetBytes: 3900,
      protocol: 1,
    });
    expect(d.sessionToken).toMatch(/^vst1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);

    const check = verifySessionToken(t.ctx.serverSecret, d.sessionToken, t.clock.now());
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.claims).toMatchObject({
      sid: d.sessionId,
      kid: key.keyId,
      dur: 60,
      feat: ['hrv', 'bp', 'spo2', 'emotion', 'gaze'],
    });
    expect(check.claims.exp - check.claims.iat).toBe(300);

    const job = await jobToWire(t.ctx.db.db, (await getJob(t.ctx.db.db, d.sessionId))!);
    expect(job).toMatchObject({
      jobId: d.sessionId,
      mode: 'stream',
      status: 'pending',
      userRef: 'u-1',
      framesProcessed: 0,
      secondsProcessed: 0,
    });
    expect(job.startedAt).toBeUndefined();
  });

  test.each([['web'], ['ios'], ['android']])('platform %s is accepted', async (platform) => {
    expect((await post({ ...OK, platform })).status).toBe(201);
  });

  test.each([[20], [180], [45.7]])('durationSec %s is accepted (whole seconds in the token)', async (durationSec) => {
    const r = await post({ ...OK, durationSec });
    expect(r.status).toBe(201);
    expect(r.json.data.maxDurationSec).toBe(Math.floor(durationSec));
  });

  test('requested features: unknown names dropped, limited to the key, baked into the token', async () => {
    const k = await t.createKey({ features: ['hrv', 'bp'] });
    const r = await post({ ...OK, features: ['bp', 'spo2', 'nonsense'] }, k);
    expect(r.status).toBe(201);
    const check = verifySessionToken(t.ctx.serverSecret, r.json.data.sessionToken, t.clock.now());
    expect(check.ok && check.claims.feat).toEqual(['bp'] satisfies Array<(typeof FEATURES)[number]>);
  });
});

describe('validation', () => {
  test.each<[string, Record<string, unknown>, string]>([
    ['platform server', { ...OK, platform: 'server' }, 'invalid_platform'],
    ['platform missing', { durationSec: 60, consent: true }, 'invalid_platform'],
    ['platform not a string', { ...OK, platform: 1 }, 'invalid_platform'],
    ['durationSec 19', { ...OK, durationSec: 19 }, 'invalid_duration'],
    ['durationSec 181', { ...OK, durationSec: 181 }, 'invalid_duration'],
    ['durationSec "60"', { ...OK, durationSec: '60' }, 'invalid_duration'],
    ['durationSec missing', { platform: 'web', consent: true }, 'invalid_duration'],
    ['consent false', { ...OK, consent: false }, 'consent_required'],
    ['consent "true"', { ...OK, consent: 'true' }, 'consent_required'],
    ['consent missing', { platform: 'web', durationSec: 60 }, 'consent_required'],
    ['userRef empty', { ...OK, userRef: '' }, 'validation_error'],
    ['userRef with a space', { ...OK, userRef: 'a b' }, 'validation_error'],
  ])('%s → 400 %s', async (_n, body, code) => {
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ ok: false, error: { code } });
  });

  test('unsigned → 401 unauthorized', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/sdk/v1/cloud/sessions',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(OK),
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
  });
});

describe('spending', () => {
  test('monthly cloud seconds used up → 403 quota_exceeded', async () => {
    const k = await t.createKey({ quotaSecondsMonth: 100 });
    expect((await post(OK, k)).status).toBe(201);
    await addMonthUsage(t.ctx.db.db, k.keyId, monthOf(t.clock.now()), 100, 0);
    const r = await post(OK, k);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('quota_exceeded');
  });

  test('empty organization balance → 403 insufficient_tokens', async () => {
    const k = await t.createKey({ tokenBalanceUsd: 0 });
    const r = await post(OK, k);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('insufficient_tokens');
  });

  test('monthly token cap used up → 403 token_quota_exceeded', async () => {
    const k = await t.createKey({ tokenQuotaMonthUsd: 1 });
    await addMonthUsage(t.ctx.db.db, k.keyId, monthOf(t.clock.now()), 0, 1_000_000);
    const r = await post(OK, k);
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe('token_quota_exceeded');
  });
});

describe('wsUrl without VITALS_PUBLIC_URL', () => {
  test('derives from the request address, http → ws', async () => {
    const t2 = await createTestApp();
    try {
      const k = await t2.createKey();
      const text = JSON.stringify(OK);
      const headers = await signRequest({
        keyId: k.keyId,
        secret: k.secret,
        method: 'POST',
        path: '/sdk/v1/cloud/sessions',
        body: text,
        timestamp: Math.floor(t2.clock.now() / 1000),
      });
      const res = await t2.app.inject({
        method: 'POST',
        url: '/sdk/v1/cloud/sessions',
        headers: { ...headers, 'content-type': 'application/json', host: 'api.local:8787' },
        payload: text,
      });
      expect(res.json().data.wsUrl).toBe('ws://api.local:8787/sdk/v1/cloud/stream');
    } finally {
      await t2.close();
    }
  });
});
