/** POST /sdk/v1/auth/test: the key's facts (spec: Endpoints; field names in docs/decisions.md). */
import { describe, expect } from 'vitest';
import { createWorld, json, test } from './helpers.js';

describe('POST /sdk/v1/auth/test', () => {
  test('.happy returns id, status, mode, features, limits, quotas, token balance, organization, server clock', async () => {
    const w = await createWorld({
      keyOptions: {
        rateLimitPerMin: 30,
        quotaSecondsMonth: 3600,
        tokenQuotaMonthUsd: 12.5,
        tokenBalanceUsd: 42,
        features: ['hrv', 'bp'],
        expiresAt: Date.UTC(2030, 0, 1),
      },
    });
    try {
      const res = await w.call({ method: 'POST', url: '/sdk/v1/auth/test' });
      expect(res.statusCode).toBe(200);
      const d = json(res).data;
      expect(d).toEqual({
        keyId: w.key.keyId,
        status: 'active',
        mode: 'live',
        features: ['hrv', 'bp'],
        expiresAt: Date.UTC(2030, 0, 1),
        limits: { rateLimitPerMin: 30, logsPerMin: 60 },
        quotas: {
          month: new Date(w.clock.now()).toISOString().slice(0, 7),
          quotaSecondsMonth: 3600,
          cloudSecondsUsed: 0,
          tokenQuotaMonthUsd: 12.5,
          tokensUsedUsd: 0,
        },
        metering: 'metered',
        tokenBalanceUsd: 42,
        organization: { id: w.key.orgId, name: expect.any(String) },
        serverTime: w.clock.now(),
      });
    } finally {
      await w.close();
    }
  });

  test('.happy an organization whose balance was never set reads unmetered (CLARIFICATIONS 28)', async ({ world }) => {
    const key = await world.newKey({ tokenBalanceUsd: null });
    const d = json(await world.call({ method: 'POST', url: '/sdk/v1/auth/test', key })).data;
    expect(d).toMatchObject({ metering: 'unmetered', tokenBalanceUsd: null });
  });

  test('.happy a key without limits shows them as 0 / null', async ({ world }) => {
    const d = json(await world.call({ method: 'POST', url: '/sdk/v1/auth/test' })).data;
    expect(d.limits.rateLimitPerMin).toBe(0);
    expect(d.quotas.quotaSecondsMonth).toBeNull();
    expect(d.quotas.tokenQuotaMonthUsd).toBeNull();
    expect(d.expiresAt).toBeNull();
  });

  test('.happy the server clock is the injected clock', async ({ world }) => {
    world.clock.advance(123_456);
    expect(json(await world.call({ method: 'POST', url: '/sdk/v1/auth/test' })).data.serverTime).toBe(
      world.clock.now(),
    );
  });

  test('.happy accepts a JSON body as well as none', async ({ world }) => {
    expect((await world.call({ method: 'POST', url: '/sdk/v1/auth/test', body: { hello: 'world' } })).statusCode).toBe(
      200,
    );
  });

  test('.error a wrong secret is 401 unauthorized', async ({ world }) => {
    const res = await world.call({ method: 'POST', url: '/sdk/v1/auth/test', signSecret: 'sk_nope' });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.code).toBe('unauthorized');
  });

  test('.security the secret and its hash never appear in the answer', async ({ world }) => {
    const res = await world.call({ method: 'POST', url: '/sdk/v1/auth/test' });
    const { createHash } = await import('node:crypto');
    expect(res.body).not.toContain(world.key.secret);
    expect(res.body).not.toContain(createHash('sha256').update(world.key.secret).digest('hex'));
  });
});
