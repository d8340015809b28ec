/** Public endpoints (spec: Public endpoints; CLARIFICATIONS 6): no authentication. */
import { describe, expect } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { PUBLIC_LIMITS } from '@vitals/protocol';
import { json, test } from './helpers.js';

/** Every (method, path) the app registered, read from the router itself so it cannot drift. */
export function registeredRoutes(app: FastifyInstance): Array<{ method: string; path: string }> {
  const out: Array<{ method: string; path: string }> = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ├└─]*)(\S.*?) \(([A-Z, ]+)\)$/.exec(line.replace(/\u00a0/g, ' '));
    if (!m) continue;
    const depth = Math.floor(m[1].length / 4);
    stack.length = depth;
    const segment = m[2];
    stack.push(segment);
    const path = stack.join('');
    for (const method of m[3].split(/,\s*/)) out.push({ method, path });
  }
  return out;
}

const openapiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('GET /health', () => {
  test('.happy {ok:true, version}, and the workers check (additive; test/worker-heartbeat.test.ts)', async ({
    world,
  }) => {
    const res = await world.app.inject({ url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(json(res)).toEqual({
      ok: true,
      version: world.t.config.version,
      workers: { alive: 1, jobsWaiting: 0, stalled: false, embedded: true, checkedAt: world.clock.now() },
    });
    expect(world.t.config.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('GET /openapi.json', () => {
  test('.happy OpenAPI 3.1 that lists every /sdk/v1 route registered in the app', async ({ world }) => {
    const doc = json(await world.app.inject({ url: '/openapi.json' }));
    expect(doc.openapi).toMatch(/^3\.1\./);
    // The presigned upload URL is its own credential (spec: "PUT {uploadUrl}"), not an API route.
    const exempt = new Set(['PUT /sdk/v1/cloud/uploads/:objectKey']);
    const routes = registeredRoutes(world.app).filter(
      (r) => r.path.startsWith('/sdk/v1/') && r.method !== 'HEAD' && !exempt.has(`${r.method} ${r.path}`),
    );
    expect(routes.length).toBeGreaterThanOrEqual(6);
    for (const r of routes) {
      const op = doc.paths?.[openapiPath(r.path)]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.path}`).toBeDefined();
    }
    // The core's routes are NCS1-signed (the session fallback routes use the session token instead).
    for (const [method, p] of [
      ['post', '/sdk/v1/measurements'],
      ['get', '/sdk/v1/measurements/{id}'],
      ['get', '/sdk/v1/users'],
      ['get', '/sdk/v1/users/{ref}/measurements'],
      ['get', '/sdk/v1/users/{ref}/baseline'],
      ['get', '/sdk/v1/logs'],
      ['post', '/sdk/v1/auth/test'],
    ]) {
      expect(doc.paths[p][method].security, `${method} ${p}`).toEqual([{ NCS1: [] }]);
    }
    expect(doc.components.securitySchemes.NCS1).toBeDefined();
  });

  test('.happy every /sdk/v1 route documents its success answer with a schema', async ({ world }) => {
    const doc = json(await world.app.inject({ url: '/openapi.json' }));
    // A model file answers with its own bytes (documented as binary, checked below), not an envelope.
    const exempt = new Set(['PUT /sdk/v1/cloud/uploads/:objectKey', 'GET /sdk/v1/models/files/:sha256']);
    const routes = registeredRoutes(world.app).filter(
      (r) => r.path.startsWith('/sdk/v1/') && r.method !== 'HEAD' && !exempt.has(`${r.method} ${r.path}`),
    );
    for (const r of routes) {
      const responses = doc.paths[openapiPath(r.path)][r.method.toLowerCase()].responses ?? {};
      const ok = Object.keys(responses).filter((code) => /^2\d\d$/.test(code));
      expect(ok.length, `${r.method} ${r.path} has no 2xx response`).toBeGreaterThan(0);
      for (const code of ok)
        expect(
          responses[code].content['application/json'].schema.properties.data,
          `${r.method} ${r.path} ${code}`,
        ).toBeDefined();
      // Failures on the service's side (500 internal_error, 503 service_unavailable) are documented too.
      expect(
        responses['5XX']?.content['application/json'].schema.properties.error,
        `${r.method} ${r.path} 5XX`,
      ).toBeDefined();
    }
    const file = doc.paths['/sdk/v1/models/files/{sha256}'].get;
    expect(file.responses['200'].content['application/octet-stream'].schema.format).toBe('binary');
    expect(file.security).toEqual([{ ModelGrant: [] }]);
    expect(doc.paths['/sdk/v1/models/grant'].post.security).toEqual([{ NCS1: [] }]);
    expect(doc.paths['/sdk/v1/models/manifest'].get.security).toEqual([{ ModelGrant: [] }]);
    expect(doc.components.securitySchemes.ModelGrant).toMatchObject({ type: 'http', scheme: 'bearer' });
    const job =
      doc.paths['/sdk/v1/cloud/jobs/{jobId}'].get.responses['200'].content['application/json'].schema.properties.data;
    expect(Object.keys(job.properties.stats.properties)).toEqual(
      expect.arrayContaining(['progress', 'engine', 'media', 'stream']),
    );
    const facts =
      doc.paths['/sdk/v1/auth/test'].post.responses['200'].content['application/json'].schema.properties.data;
    expect(facts.required).toEqual(
      expect.arrayContaining([
        'keyId',
        'status',
        'mode',
        'features',
        'limits',
        'quotas',
        'metering',
        'tokenBalanceUsd',
        'organization',
        'serverTime',
      ]),
    );
  });

  test('.happy request bodies are described from the schemas (source required)', async ({ world }) => {
    const doc = json(await world.app.inject({ url: '/openapi.json' }));
    const body = doc.paths['/sdk/v1/measurements'].post.requestBody.content['application/json'].schema;
    expect(body.required).toContain('source');
    expect(body.properties.sdkVersion.pattern).toBe('^[A-Za-z0-9][A-Za-z0-9._+-]*$');
  });
});

describe('GET /.well-known/agent.json', () => {
  test('.happy names capabilities and the NCS1 auth scheme', async ({ world }) => {
    const res = await world.app.inject({ url: '/.well-known/agent.json', headers: { host: 'vitals.example:8787' } });
    expect(res.statusCode).toBe(200);
    const doc = json(res);
    expect(doc.auth.scheme).toBe('NCS1');
    expect(doc.auth.headers).toEqual(['x-key-id', 'x-timestamp', 'x-nonce', 'x-signature']);
    expect(doc.capabilities).toBeDefined();
    expect(doc.api.openapi).toMatch(/\/openapi\.json$/);
  });
});

describe('GET /api/v1/pricing', () => {
  test('.happy token rates, metric sets and packs', async ({ world }) => {
    const res = await world.app.inject({ url: '/api/v1/pricing' });
    expect(res.statusCode).toBe(200);
    const { data } = json(res);
    expect(data.currency).toBe('USD');
    expect(data.rates.core.perSecondUsd).toBeGreaterThan(0);
    expect(Object.keys(data.metricSets)).toContain('core');
    expect(data.packs.length).toBeGreaterThan(0);
    for (const p of data.packs) expect(p.tokensUsd).toBeGreaterThanOrEqual(p.priceUsd);
  });
});

describe('GET /api/v1/limits', () => {
  test('.happy exactly the eight named constants, with their real values', async ({ world }) => {
    const res = await world.app.inject({ url: '/api/v1/limits' });
    expect(res.statusCode).toBe(200);
    const { data } = json(res);
    expect(Object.keys(data).sort()).toEqual(
      [
        'keyRateLimitPerMinMax',
        'orgWebhookLimit',
        'webhookAttempts',
        'measurementBaseDurationSec',
        'cloudMinDurationSec',
        'cloudMaxDurationSec',
        'exportRowCap',
        'maxWindowDays',
      ].sort(),
    );
    // The spec's own numbers where it gives them.
    expect(data).toMatchObject({
      orgWebhookLimit: 5,
      webhookAttempts: 3,
      cloudMinDurationSec: 20,
      cloudMaxDurationSec: 180,
    });
    expect(data).toEqual({ ...PUBLIC_LIMITS });
    for (const v of Object.values(data)) expect(Number.isInteger(v)).toBe(true);
  });
});

describe('.security public endpoints need no signature and ignore one', () => {
  test.for(['/health', '/openapi.json', '/.well-known/agent.json', '/api/v1/pricing', '/api/v1/limits'])(
    '%s',
    async (url, { world }) => {
      const res = await world.app.inject({ url, headers: { 'x-key-id': 'key_unknown', 'x-signature': 'garbage' } });
      expect(res.statusCode).toBe(200);
      expect(await world.usageRows('key_unknown')).toHaveLength(0);
    },
  );
});
