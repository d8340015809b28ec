/**
 * Console API keys and webhooks (issue 16, "API keys", "Webhooks"): happy paths, errors, and
 * another organization's ids answering a plain 404. Runs on SQLite and PostgreSQL.
 */
import { describe, expect } from 'vitest';
import { sha256Hex } from '@vitals/protocol';
import { json, test } from './console-world.js';
import { signedInject } from './helpers.js';
import { insertDelivery, pendingAttemptState } from '../src/webhooks/journal.js';

const HOOK = 'https://127.0.0.1:9/hook';

describe('API keys', () => {
  test('create shows the secret once, stores only its hash, and the key signs requests', async ({ cw }) => {
    cw.clock.advance(1000); // newest first: after the world's key
    const res = await cw.api({
      method: 'POST',
      url: '/api/v1/keys',
      body: {
        name: 'web app',
        rateLimitPerMin: 120,
        quotaSecondsMonth: 3600,
        tokenQuotaMonthUsd: 12.5,
        features: ['hrv'],
      },
    });
    expect(res.statusCode).toBe(201);
    const { key, secret } = json(res).data;
    expect(secret).toMatch(/^sk_[0-9a-f]{64}$/);
    expect(key).toMatchObject({
      name: 'web app',
      status: 'active',
      mode: 'live',
      rateLimitPerMin: 120,
      quotaSecondsMonth: 3600,
      tokenQuotaMonthUsd: 12.5,
      features: ['hrv'],
      expiresAt: null,
      lastUsedAt: null,
    });
    const row = await cw.t.ctx.db.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', key.keyId)
      .executeTakeFirstOrThrow();
    expect(row.secret_sha256).toBe(await sha256Hex(secret));
    expect(JSON.stringify(row)).not.toContain(secret);
    const signed = await signedInject(
      cw.app,
      { keyId: key.keyId, secret },
      {
        method: 'POST',
        url: '/sdk/v1/auth/test',
        timestamp: Math.floor(cw.clock.now() / 1000),
      },
    );
    expect(signed.statusCode).toBe(200);
    const list = json(await cw.api({ url: '/api/v1/keys' })).data.items;
    expect(list.map((k: { keyId: string }) => k.keyId)).toEqual([key.keyId, cw.key.keyId]);
    expect(list[0].lastUsedAt).toBe(cw.clock.now());
    expect(JSON.stringify(list)).not.toContain(secret);
  });

  test('disable takes effect on the signature layer; enable restores; null clears a cap', async ({ cw }) => {
    const url = `/api/v1/keys/${cw.key.keyId}`;
    const off = await cw.api({ method: 'PATCH', url, body: { status: 'disabled', tokenQuotaMonthUsd: 5 } });
    expect(off.statusCode).toBe(200);
    expect(json(off).data.key).toMatchObject({ status: 'disabled', tokenQuotaMonthUsd: 5 });
    const refused = await cw.call({ method: 'POST', url: '/sdk/v1/auth/test' });
    expect(refused.statusCode).toBe(403);
    expect(json(refused).error.code).toBe('key_disabled');
    const on = await cw.api({
      method: 'PATCH',
      url,
      body: { status: 'active', tokenQuotaMonthUsd: null, name: 'main' },
    });
    expect(json(on).data.key).toMatchObject({ status: 'active', tokenQuotaMonthUsd: null, name: 'main' });
    expect((await cw.call({ method: 'POST', url: '/sdk/v1/auth/test' })).statusCode).toBe(200);
  });

  test.for([
    ['rate limit above the maximum', { rateLimitPerMin: 10_001 }],
    ['negative quota', { quotaSecondsMonth: -1 }],
    ['unknown feature', { features: ['telepathy'] }],
    ['unknown field', { owner: 'me' }],
    ['name too long', { name: 'x'.repeat(65) }],
    ['cap as text', { tokenQuotaMonthUsd: '5' }],
  ])('create refuses %s with 400 validation_error', async ([, body], { cw }) => {
    const res = await cw.api({ method: 'POST', url: '/api/v1/keys', body });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });

  test('an empty change is 400; an unknown key is 404', async ({ cw }) => {
    const empty = await cw.api({ method: 'PATCH', url: `/api/v1/keys/${cw.key.keyId}`, body: {} });
    expect(empty.statusCode).toBe(400);
    const unknown = await cw.api({
      method: 'PATCH',
      url: '/api/v1/keys/key_000000000000000000000000',
      body: { name: 'x' },
    });
    expect(unknown.statusCode).toBe(404);
    expect(json(unknown).error.code).toBe('not_found');
  });

  test("another organization's key: not listed, and changing it is a plain 404 that changes nothing", async ({
    cw,
  }) => {
    const other = await cw.otherOrg();
    const res = await cw.api({ method: 'PATCH', url: `/api/v1/keys/${other.key.keyId}`, body: { status: 'disabled' } });
    expect(res.statusCode).toBe(404);
    expect(json(res)).toEqual(
      json(
        await cw.api({
          method: 'PATCH',
          url: '/api/v1/keys/key_000000000000000000000000',
          body: { status: 'disabled' },
        }),
      ),
    );
    expect((await cw.call({ method: 'POST', url: '/sdk/v1/auth/test', key: other.key })).statusCode).toBe(200);
    const mine = json(await cw.api({ url: '/api/v1/keys' })).data.items.map((k: { keyId: string }) => k.keyId);
    expect(mine).toEqual([cw.key.keyId]);
  });
});

describe('webhooks', () => {
  test('add (secret once), list, rotate (new secret), delete', async ({ cw }) => {
    const add = await cw.api({ method: 'POST', url: '/api/v1/webhooks', body: { url: HOOK } });
    expect(add.statusCode).toBe(201);
    const { endpoint, secret } = json(add).data;
    expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    expect(endpoint).toMatchObject({ url: HOOK, status: 'active', rotatedAt: null });
    const row = await cw.t.ctx.db.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_sha256).toBe(await sha256Hex(secret));
    const list = json(await cw.api({ url: '/api/v1/webhooks' })).data;
    expect(list).toEqual({ items: [endpoint], limit: 5 });

    cw.clock.advance(1000);
    const rot = await cw.api({ method: 'POST', url: `/api/v1/webhooks/${endpoint.id}/rotate` });
    expect(rot.statusCode).toBe(200);
    expect(json(rot).data.secret).not.toBe(secret);
    expect(json(rot).data.endpoint.rotatedAt).toBe(cw.clock.now());

    const del = await cw.api({ method: 'DELETE', url: `/api/v1/webhooks/${endpoint.id}` });
    expect(del.statusCode).toBe(204);
    expect(json(await cw.api({ url: '/api/v1/webhooks' })).data.items).toEqual([]);
    expect((await cw.api({ method: 'POST', url: `/api/v1/webhooks/${endpoint.id}/rotate` })).statusCode).toBe(404);
  });

  test('at most 5 endpoints: the 6th is 409 conflict; a deleted one frees a place', async ({ cw }) => {
    const ids = [];
    for (let i = 0; i < 5; i++) {
      const res = await cw.api({ method: 'POST', url: '/api/v1/webhooks', body: { url: `${HOOK}/${i}` } });
      expect(res.statusCode).toBe(201);
      ids.push(json(res).data.endpoint.id);
    }
    const sixth = await cw.api({ method: 'POST', url: '/api/v1/webhooks', body: { url: HOOK } });
    expect(sixth.statusCode).toBe(409);
    expect(json(sixth).error.code).toBe('conflict');
    await cw.api({ method: 'DELETE', url: `/api/v1/webhooks/${ids[0]}` });
    expect((await cw.api({ method: 'POST', url: '/api/v1/webhooks', body: { url: HOOK } })).statusCode).toBe(201);
  });

  test.for([
    ['plain http', 'http://127.0.0.1:9/hook'],
    ['a private address not allowed', 'https://10.0.0.1/hook'],
    ['not a URL', 'nope'],
    ['credentials in the URL', 'https://u:p@127.0.0.1:9/hook'],
  ])('a URL the service may not reach (%s) is 400 validation_error', async ([, url], { cw }) => {
    const res = await cw.api({ method: 'POST', url: '/api/v1/webhooks', body: { url } });
    expect(res.statusCode).toBe(400);
    expect(json(res).error.code).toBe('validation_error');
  });

  test('Send test event journals a webhook.test delivery; the journal filters and pages; detail and redeliver', async ({
    cw,
  }) => {
    const a = json(await cw.api({ method: 'POST', url: '/api/v1/webhooks', body: { url: `${HOOK}/a` } })).data.endpoint;
    const b = json(await cw.api({ method: 'POST', url: '/api/v1/webhooks', body: { url: `${HOOK}/b` } })).data.endpoint;
    const sent: string[] = [];
    for (const ep of [a, b, a]) {
      cw.clock.advance(1000);
      const res = await cw.api({ method: 'POST', url: `/api/v1/webhooks/${ep.id}/test` });
      expect(res.statusCode).toBe(202);
      sent.push(json(res).data.deliveryId);
    }
    expect(sent.every((id) => /^whd_[0-9a-f]{24}$/.test(id))).toBe(true);
    const all = json(await cw.api({ url: '/api/v1/webhooks/deliveries' })).data;
    expect(all.items.map((d: { id: string }) => d.id)).toEqual([...sent].reverse());
    expect(all.nextCursor).toBeNull();
    expect(all.items[0]).toMatchObject({
      target: 'endpoint',
      endpointId: a.id,
      event: 'webhook.test',
      jobId: null,
      url: `${HOOK}/a`,
      status: 'pending',
      httpStatus: null,
      attempts: 0,
      maxAttempts: 3,
      lastError: null,
      responseTimeMs: null,
      redeliveryOf: null,
    });
    const byEndpoint = json(await cw.api({ url: `/api/v1/webhooks/deliveries?endpointId=${b.id}` })).data.items;
    expect(byEndpoint.map((d: { id: string }) => d.id)).toEqual([sent[1]]);
    expect(json(await cw.api({ url: '/api/v1/webhooks/deliveries?outcome=succeeded' })).data.items).toEqual([]);
    expect(json(await cw.api({ url: '/api/v1/webhooks/deliveries?event=job.completed' })).data.items).toEqual([]);

    const p1 = json(await cw.api({ url: '/api/v1/webhooks/deliveries?limit=2' })).data;
    expect(p1.items).toHaveLength(2);
    const p2 = json(await cw.api({ url: `/api/v1/webhooks/deliveries?limit=2&cursor=${p1.nextCursor}` })).data;
    expect(p2.items.map((d: { id: string }) => d.id)).toEqual([sent[0]]);
    expect(p2.nextCursor).toBeNull();

    const detail = json(await cw.api({ url: `/api/v1/webhooks/deliveries/${sent[0]}` })).data;
    expect(detail).toMatchObject({ delivery: { id: sent[0] }, attemptLog: [] });

    const again = await cw.api({ method: 'POST', url: `/api/v1/webhooks/deliveries/${sent[0]}/redeliver` });
    expect(again.statusCode).toBe(202);
    const newId = json(again).data.deliveryId;
    const redo = json(await cw.api({ url: `/api/v1/webhooks/deliveries/${newId}` })).data.delivery;
    expect(redo).toMatchObject({ redeliveryOf: sent[0], event: 'webhook.test', status: 'pending', attempts: 0 });
  });

  test('a bad cursor or outcome is 400', async ({ cw }) => {
    for (const q of ['cursor=nope', 'outcome=lost', 'limit=0', 'limit=101']) {
      const res = await cw.api({ url: `/api/v1/webhooks/deliveries?${q}` });
      expect(res.statusCode, q).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
    }
  });

  test("another organization's endpoint and deliveries: invisible, and every action on them a plain 404", async ({
    cw,
  }) => {
    const other = await cw.otherOrg();
    const as = (cookie: string) => (o: Parameters<typeof cw.api>[0]) => cw.api({ ...o, cookie });
    const theirs = as(other.cookie);
    const ep = json(await theirs({ method: 'POST', url: '/api/v1/webhooks', body: { url: HOOK } })).data.endpoint;
    const whd = json(await theirs({ method: 'POST', url: `/api/v1/webhooks/${ep.id}/test` })).data.deliveryId;
    // A per-job delivery of theirs (target job) too.
    await insertDelivery(cw.t.ctx.db.db, {
      id: 'whd_00000000000000000000beef',
      target: 'job',
      endpoint_id: null,
      org_id: other.orgId,
      key_id: other.key.keyId,
      job_id: 'cj_000000000000000000000001',
      event: 'job.completed',
      url: HOOK,
      ...pendingAttemptState(cw.clock.now()),
      redelivery_of: null,
    });
    for (const [method, url] of [
      ['POST', `/api/v1/webhooks/${ep.id}/rotate`],
      ['POST', `/api/v1/webhooks/${ep.id}/test`],
      ['DELETE', `/api/v1/webhooks/${ep.id}`],
      ['GET', `/api/v1/webhooks/deliveries/${whd}`],
      ['POST', `/api/v1/webhooks/deliveries/${whd}/redeliver`],
      ['GET', '/api/v1/webhooks/deliveries/whd_00000000000000000000beef'],
      ['POST', '/api/v1/webhooks/deliveries/whd_00000000000000000000beef/redeliver'],
    ]) {
      const res = await cw.api({ method, url });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(json(res).error.code).toBe('not_found');
    }
    expect(json(await cw.api({ url: '/api/v1/webhooks' })).data.items).toEqual([]);
    expect(json(await cw.api({ url: '/api/v1/webhooks/deliveries' })).data.items).toEqual([]);
    expect(json(await cw.api({ url: `/api/v1/webhooks/deliveries?endpointId=${ep.id}` })).data.items).toEqual([]);
    // Theirs is untouched: still listed for them, with its one delivery and the job delivery.
    expect(json(await theirs({ url: '/api/v1/webhooks' })).data.items).toHaveLength(1);
    expect(json(await theirs({ url: '/api/v1/webhooks/deliveries' })).data.items).toHaveLength(2);
  });
});
