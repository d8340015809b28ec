/** Public discovery endpoints (spec: Public endpoints; no authentication). */
import type { FastifyInstance } from 'fastify';
import { PUBLIC_LIMITS, FEATURES } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { PRICING } from '../domain/pricing.js';
import { workerWatchOf } from '../batch/heartbeat.js';

export async function publicRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const hide = { schema: { hide: true } };
  // `workers` (additive): the API process's last check that jobs are being processed (batch/heartbeat.ts).
  app.get('/health', hide, async () => {
    const workers = workerWatchOf(ctx)?.last;
    return { ok: true, version: ctx.config.version, ...(workers ? { workers } : {}) };
  });
  app.get('/openapi.json', hide, async () => app.swagger());
  app.get('/api/v1/limits', hide, async () => ({ ok: true, data: PUBLIC_LIMITS }));
  app.get('/api/v1/pricing', hide, async () => ({ ok: true, data: PRICING }));
  app.get('/.well-known/agent.json', hide, async (req) => {
    const base =
      ctx.config.publicUrl ?? `${req.protocol}://${req.headers.host ?? `${ctx.config.host}:${ctx.config.port}`}`;
    return {
      schemaVersion: '1.0',
      name: 'vitals',
      description:
        'Vital-signs measurement from face video (rPPG): heart rate, HRV, breathing rate, stress index, beta blood pressure and SpO2. Wellness estimates, not medical values.',
      version: ctx.config.version,
      api: { baseUrl: `${base}/sdk/v1`, openapi: `${base}/openapi.json` },
      auth: {
        scheme: 'NCS1',
        headers: ['x-key-id', 'x-timestamp', 'x-nonce', 'x-signature'],
        canonicalString: ['NCS1', 'METHOD', 'path without query', 'x-timestamp', 'x-nonce', 'sha256hex(body)'],
        key: 'lowercase hex SHA-256 of the key secret',
        clockSkewSec: 300,
      },
      capabilities: {
        onDeviceSubmission: true,
        cloudStreaming: { protocol: 1, transport: 'websocket' },
        cloudBatch: { kinds: ['frames', 'video'] },
        features: FEATURES,
        userHistory: true,
        baselines: true,
        webhooks: true,
      },
      limits: `${base}/api/v1/limits`,
      pricing: `${base}/api/v1/pricing`,
    };
  });
}
