/** POST /sdk/v1/auth/test: verifies the signature and returns the key's facts. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { AuthTestResult, ErrorEnvelope, LOGS_PER_MIN, envelopeOf } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { getOrg, usdFromMicro } from '../store/orgs-keys.js';
import { tokenBalanceView } from '../domain/balance.js';
import { monthOf, getMonthUsage } from '../store/metering.js';

export async function authTestRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post(
    '/sdk/v1/auth/test',
    {
      config: { signed: true },
      schema: {
        summary: 'Verify credentials and read the key facts',
        body: Type.Optional(Type.Unknown()),
        response: { 200: envelopeOf(AuthTestResult), '4xx': ErrorEnvelope },
      },
    },
    async (req): Promise<{ ok: true; data: AuthTestResult }> => {
      const key = req.auth!.key;
      const now = ctx.clock.now();
      const org = await getOrg(ctx.db.db, key.orgId);
      const month = monthOf(now);
      const usage = await getMonthUsage(ctx.db.db, key.id, month);
      return {
        ok: true,
        data: {
          keyId: key.id,
          status: key.status,
          mode: key.mode,
          features: key.features,
          expiresAt: key.expiresAt,
          limits: {
            rateLimitPerMin: key.rateLimitPerMin,
            logsPerMin: LOGS_PER_MIN,
          },
          quotas: {
            month,
            quotaSecondsMonth: key.quotaSecondsMonth,
            cloudSecondsUsed: usage.cloudSeconds,
            tokenQuotaMonthUsd: key.tokenQuotaMonthMicro === null ? null : usdFromMicro(key.tokenQuotaMonthMicro),
            tokensUsedUsd: usdFromMicro(usage.tokensMicro),
          },
          ...tokenBalanceView(org),
          organization: org ? { id: org.id, name: org.name } : null,
          serverTime: now,
        },
      };
    },
  );
}
