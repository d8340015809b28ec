/**
 * Retry rules with a scripted fetch and injected sleep (no real time): 429 honours
 * RateLimit-Reset, 503 backs off, other 4xx are thrown at once, and every attempt is signed anew.
 */
import { describe, expect, it } from 'vitest';
import { signingKeyOf, verifySignature } from '@vitals/protocol';
import {
  ApiError,
  END_POLL_MS,
  VitalsClient,
  WaitTimeoutError,
  retryDelayMs,
  DEFAULT_RETRY,
  type FetchLike,
} from '@vitals/sdk';

interface Seen {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: Uint8Array;
}

function scripted(responses: Array<{ status: number; headers?: Record<string, string>; body?: unknown }>) {
  const seen: Seen[] = [];
  const fetch: FetchLike = async (input, init) => {
    const headers = init?.headers as Record<string, string>;
    seen.push({
      url: String(input),
      method: String(init?.method),
      headers,
      body: init?.body instanceof Uint8Array ? init.body : new Uint8Array(0),
    });
    const r = responses[Math.min(seen.length - 1, responses.length - 1)];
    return new Response(JSON.stringify(r.body ?? { ok: true, data: { fine: true } }), {
      status: r.status,
      headers: { 'content-type': 'application/json', 'x-request-id': `req_${seen.length}`, ...r.headers },
    });
  };
  return { fetch, seen };
}

const limited = {
  status: 429,
  headers: { 'RateLimit-Reset': '2' },
  body: { ok: false, error: { code: 'rate_limited', message: 'slow down' } },
};
const unavailable = { status: 503, body: { ok: false, error: { code: 'cloud_unavailable', message: 'no nodes' } } };
const ok = { status: 200 };

function make(responses: Parameters<typeof scripted>[0], retry = {}) {
  const s = scripted(responses);
  const sleeps: number[] = [];
  const c = new VitalsClient({
    keyId: 'key_1',
    secret: 'sk_test',
    baseUrl: 'http://api.test',
    fetch: s.fetch,
    sleep: async (ms) => void sleeps.push(ms),
    retry,
  });
  return { c, seen: s.seen, sleeps };
}

describe('retries', () => {
  it('429 waits at least RateLimit-Reset, then succeeds; each attempt has a fresh nonce and a valid signature', async () => {
    const { c, seen, sleeps } = make([limited, limited, ok]);
    await c.measurements.create({ source: 'web' });
    expect(seen).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
    for (const s of sleeps) expect(s).toBeGreaterThanOrEqual(2000);
    expect(new Set(seen.map((s) => s.headers['x-nonce'])).size).toBe(3);
    const secretHash = await signingKeyOf('sk_test');
    for (const s of seen) {
      const valid = await verifySignature({
        secretSha256Hex: secretHash,
        method: 'POST',
        path: new URL(s.url).pathname,
        timestamp: s.headers['x-timestamp'],
        nonce: s.headers['x-nonce'],
        body: s.body,
        signature: s.headers['x-signature'],
      });
      expect(valid).toBe(true);
    }
  });

  it('503 backs off exponentially with jitter and gives up after maxRetries with the ApiError', async () => {
    const { c, seen, sleeps } = make([unavailable], { maxRetries: 3, baseDelayMs: 100 });
    const err = (await c.jobs.get('cj_1').catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'cloud_unavailable', status: 503, requestId: 'req_4' });
    expect(seen).toHaveLength(4);
    // equal jitter: step/2 <= delay <= step for steps 100, 200, 400
    expect(sleeps[0]).toBeGreaterThanOrEqual(50);
    expect(sleeps[0]).toBeLessThanOrEqual(100);
    expect(sleeps[2]).toBeGreaterThanOrEqual(200);
    expect(sleeps[2]).toBeLessThanOrEqual(400);
  });

  it('503 service_unavailable waits at least Retry-After, even with maxResetWaitMs 0 (the CLI), then succeeds', async () => {
    const busy = {
      status: 503,
      headers: { 'Retry-After': '1' },
      body: { ok: false, error: { code: 'service_unavailable', message: 'retry shortly' } },
    };
    const { c, seen, sleeps } = make([busy, busy, ok], { maxResetWaitMs: 0, baseDelayMs: 100 });
    await c.measurements.create({ source: 'web' });
    expect(seen).toHaveLength(3);
    expect(sleeps).toHaveLength(2);
    for (const s of sleeps) expect(s).toBeGreaterThanOrEqual(1000);
    expect(new Set(seen.map((s) => s.headers['x-nonce'])).size).toBe(3);
  });

  it('503 service_unavailable after the last retry is thrown with retryAfterSec; a Retry-After past maxDelayMs is not waited for', async () => {
    const busy = (after: string) => ({
      status: 503,
      headers: { 'Retry-After': after },
      body: { ok: false, error: { code: 'service_unavailable', message: 'retry shortly' } },
    });
    const a = make([busy('1')], { maxRetries: 1 });
    await expect(a.c.jobs.get('cj_1')).rejects.toMatchObject({
      code: 'service_unavailable',
      status: 503,
      retryAfterSec: 1,
    });
    expect(a.seen).toHaveLength(2);
    const b = make([busy('120')], { maxDelayMs: 8000 });
    await expect(b.c.jobs.get('cj_1')).rejects.toMatchObject({ code: 'service_unavailable', retryAfterSec: 120 });
    expect(b.seen).toHaveLength(1);
    expect(b.sleeps).toEqual([]);
  });

  it.each([
    [400, 'validation_error'],
    [401, 'unauthorized'],
    [403, 'quota_exceeded'],
    [404, 'not_found'],
    [409, 'idempotency_conflict'],
    [422, 'sha256_mismatch'],
    [500, 'internal_error'],
  ])('HTTP %i (%s) is thrown at once, never retried', async (status, code) => {
    const { c, seen } = make([{ status, body: { ok: false, error: { code, message: 'no' } } }]);
    await expect(c.measurements.create({ source: 'web' })).rejects.toMatchObject({ code, status });
    expect(seen).toHaveLength(1);
  });

  it('a RateLimit-Reset beyond maxResetWaitMs is not waited for', async () => {
    const { c, seen, sleeps } = make([{ ...limited, headers: { 'RateLimit-Reset': '59' } }], {
      maxResetWaitMs: 10_000,
    });
    await expect(c.auth.test()).rejects.toMatchObject({ code: 'rate_limited', retryAfterSec: 59 });
    expect(seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('a failure without an envelope still becomes an ApiError from its status', async () => {
    const s = scripted([ok]);
    const fetch: FetchLike = async (input, init) => {
      await s.fetch(input, init);
      return new Response('<html>bad gateway</html>', { status: 502 });
    };
    const c = new VitalsClient({ keyId: 'k', secret: 's', baseUrl: 'http://api.test', fetch });
    await expect(c.jobs.get('cj_1')).rejects.toMatchObject({ code: 'internal_error', status: 502 });
  });

  it('a bare 503 (a proxy, no envelope) is service_unavailable, retried, and honours its Retry-After', async () => {
    const s = scripted([ok]);
    let calls = 0;
    const fetch: FetchLike = async (input, init) => {
      await s.fetch(input, init);
      calls++;
      return new Response('Service Unavailable', { status: 503, headers: { 'retry-after': '3' } });
    };
    const sleeps: number[] = [];
    const c = new VitalsClient({
      keyId: 'k',
      secret: 's',
      baseUrl: 'http://api.test',
      fetch,
      sleep: async (ms) => void sleeps.push(ms),
      retry: { maxRetries: 1 },
    });
    await expect(c.jobs.get('cj_1')).rejects.toMatchObject({
      code: 'service_unavailable',
      status: 503,
      retryAfterSec: 3,
    });
    expect(calls).toBe(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(3000);
  });

  it('retryDelayMs: exponential steps are capped', () => {
    const mid = () => 0.5;
    expect(retryDelayMs(DEFAULT_RETRY, 0, undefined, mid)).toBe(375);
    expect(retryDelayMs(DEFAULT_RETRY, 10, undefined, mid)).toBe(6000);
  });
});

describe('signing', () => {
  it('signs the path without the query and the exact bytes sent; GET signs the empty body', async () => {
    const { c, seen } = make([ok]);
    await c.measurements.get('meas_abc', { advanced: true, include: 'assessment' });
    const s = seen[0];
    expect(s.url).toBe('http://api.test/sdk/v1/measurements/meas_abc?advanced=true&include=assessment');
    expect(s.headers['x-key-id']).toBe('key_1');
    expect(s.headers['x-nonce'].length).toBeGreaterThanOrEqual(8);
    expect(Number(s.headers['x-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
    const valid = await verifySignature({
      secretSha256Hex: await signingKeyOf('sk_test'),
      method: 'GET',
      path: '/sdk/v1/measurements/meas_abc',
      timestamp: s.headers['x-timestamp'],
      nonce: s.headers['x-nonce'],
      signature: s.headers['x-signature'],
    });
    expect(valid).toBe(true);
  });

  it('uses the injected clock for x-timestamp', async () => {
    const s = scripted([ok]);
    const c = new VitalsClient({
      keyId: 'k',
      secret: 's',
      baseUrl: 'http://api.test/',
      fetch: s.fetch,
      clock: () => 1_700_000_000_500,
    });
    await c.auth.test();
    expect(s.seen[0].headers['x-timestamp']).toBe('1700000000');
    expect(s.seen[0].url).toBe('http://api.test/sdk/v1/auth/test');
  });

  it('refuses to build without credentials', () => {
    expect(() => new VitalsClient({ keyId: '', secret: 's', baseUrl: 'http://x' })).toThrow(/keyId/);
  });
});

describe('jobs.wait on an injected clock', () => {
  function polling(statuses: string[], limitedAt?: number, unavailable?: { from: number; count: number }) {
    let now = 0;
    let i = 0;
    const fetch: FetchLike = async () => {
      const n = i++;
      if (unavailable && n >= unavailable.from && n < unavailable.from + unavailable.count) {
        return new Response(JSON.stringify({ ok: false, error: { code: 'service_unavailable', message: 'later' } }), {
          status: 503,
          headers: { 'Retry-After': '1' },
        });
      }
      if (n === limitedAt) {
        return new Response(JSON.stringify({ ok: false, error: { code: 'rate_limited', message: 'slow' } }), {
          status: 429,
          headers: { 'RateLimit-Reset': '5' },
        });
      }
      // 'running:aux' is a running job whose stats.progress is {stage: 'aux'} (likewise other stages).
      const [status, stage, fraction] = statuses[Math.min(n, statuses.length - 1)].split(':');
      const stats = stage ? { progress: { stage, fraction: Number(fraction ?? 0.9) } } : undefined;
      return new Response(JSON.stringify({ ok: true, data: { jobId: 'cj_1', status, createdAt: 0, stats } }), {
        status: 200,
      });
    };
    const sleeps: number[] = [];
    const c = new VitalsClient({
      keyId: 'k',
      secret: 's',
      baseUrl: 'http://api.test',
      fetch,
      clock: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
        now += ms;
      },
      retry: { maxResetWaitMs: 0 },
    });
    return { c, sleeps };
  }

  it.each(['completed', 'failed', 'aborted', 'expired'])('stops at %s and returns the job', async (terminal) => {
    const { c, sleeps } = polling(['queued', 'running', terminal]);
    const seen: string[] = [];
    const job = await c.jobs.wait('cj_1', { intervalMs: 1000, onPoll: (j) => seen.push(j.status) });
    expect(job.status).toBe(terminal);
    expect(seen).toEqual(['queued', 'running', terminal]);
    expect(sleeps).toEqual([1000, 1000]);
  });

  it('polls every second by default', async () => {
    const { c, sleeps } = polling(['queued', 'running', 'running', 'completed']);
    expect((await c.jobs.wait('cj_1')).status).toBe('completed');
    expect(sleeps).toEqual([1000, 1000, 1000]);
  });

  it('polls every 250 ms once the job reports its last stages', async () => {
    const { c, sleeps } = polling([
      'running:decoding:0.5',
      'running:decoding:0.96',
      'running:estimating',
      'running:aux',
      'completed',
    ]);
    expect((await c.jobs.wait('cj_1')).status).toBe('completed');
    expect(sleeps).toEqual([1000, END_POLL_MS, END_POLL_MS, END_POLL_MS]);
    expect(END_POLL_MS).toBe(250);
    // A longer interval asked for is shortened there too; a shorter one is kept.
    const slow = polling(['running:decoding:0.2', 'running:aux', 'completed']);
    await slow.c.jobs.wait('cj_1', { intervalMs: 5000 });
    expect(slow.sleeps).toEqual([5000, 250]);
    const fast = polling(['running:aux', 'completed']);
    await fast.c.jobs.wait('cj_1', { intervalMs: 100 });
    expect(fast.sleeps).toEqual([100]);
  });

  it('throws WaitTimeoutError with the last state at timeoutMs', async () => {
    const { c } = polling(['running']);
    const err = (await c.jobs
      .wait('cj_1', { intervalMs: 1000, timeoutMs: 3500 })
      .catch((e: unknown) => e)) as WaitTimeoutError;
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect(err.code).toBe('wait_timeout');
    expect(err.last).toMatchObject({ status: 'running' });
  });

  it('slows down on a 429 while polling instead of failing', async () => {
    const { c, sleeps } = polling(['queued', 'queued', 'completed'], 1);
    const job = await c.jobs.wait('cj_1', { intervalMs: 1000 });
    expect(job.status).toBe('completed');
    expect(sleeps).toContain(5000);
  });

  it('rides out a database outage longer than its retries (503 service_unavailable) instead of failing', async () => {
    // Poll 2 and its 3 retries all get 503: the wait goes on and sees the job complete.
    const { c, sleeps } = polling(['queued', 'queued', 'completed'], undefined, { from: 1, count: 4 });
    const job = await c.jobs.wait('cj_1', { intervalMs: 1000 });
    expect(job.status).toBe('completed');
    expect(sleeps.filter((ms) => ms >= 1000).length).toBeGreaterThanOrEqual(4);
  });

  it('still ends at timeoutMs when the outage outlasts it', async () => {
    const { c } = polling(['queued'], undefined, { from: 1, count: 10_000 });
    const err = await c.jobs.wait('cj_1', { intervalMs: 1000, timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as WaitTimeoutError).last).toMatchObject({ status: 'queued' });
  });
});

describe('logs.iterate({ follow }) on an injected clock', () => {
  it('rides out a 503 service_unavailable that outlasts the retries and goes on from its cursor', async () => {
    const row = (id: string) => ({ id, time: 1, endpoint: '/sdk/v1/auth/test', method: 'POST', status: 'success' });
    const urls: string[] = [];
    let n = 0;
    const fetch: FetchLike = async (input) => {
      urls.push(String(input));
      const i = n++;
      if (i === 0) return Response.json({ ok: true, data: { items: [row('log_a')], nextCursor: '1.log_a' } });
      if (i <= 4)
        return Response.json(
          { ok: false, error: { code: 'service_unavailable', message: 'later' } },
          { status: 503, headers: { 'Retry-After': '1' } },
        );
      return Response.json({ ok: true, data: { items: [row('log_b')], nextCursor: '1.log_b' } });
    };
    let now = 0;
    const c = new VitalsClient({
      keyId: 'k',
      secret: 's',
      baseUrl: 'http://api.test',
      fetch,
      clock: () => now,
      sleep: async (ms) => void (now += ms),
    });
    const ids: string[] = [];
    for await (const r of c.logs.iterate({ follow: true })) {
      ids.push(r.id);
      if (ids.length === 2) break;
    }
    expect(ids).toEqual(['log_a', 'log_b']);
    expect(urls).toHaveLength(6);
    expect(urls[5]).toContain('cursor=1.log_a');
  });
});
