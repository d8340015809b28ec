/**
 * The Overview page (issue 16): this month's cloud seconds and token spend against the caps, the
 * balance, measurements per day, the quality mix and refusals by usage-log code, all over the
 * organization's keys. Caps are per key (spec: Rate limits), so they are listed per key; the
 * organization-wide cap is their sum when every active key has one (docs/console.md, "Overview").
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { ConsoleMonthQuery, ConsoleOverview, ErrorEnvelope, envelopeOf } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { getOrg, listOrgKeys, usdFromMicro } from '../store/orgs-keys.js';
import { monthOf } from '../store/metering.js';
import { sessionOf } from './guard.js';
import { balanceUsdOf } from './views.js';

const DAY_MS = 86_400_000;
/** A literal, not a parameter: PostgreSQL must see the same expression in SELECT and GROUP BY. */
const DAY = sql<number>`created_at / ${sql.lit(DAY_MS)}`;

function monthBounds(month: string): { start: number; end: number } {
  const [y, m] = month.split('-').map(Number);
  return { start: Date.UTC(y, m - 1, 1), end: Date.UTC(y, m, 1) };
}

/** The sum of the caps of active keys, or null when one of them has none (no overall cap). */
function summedCap(values: Array<number | null>): number | null {
  if (values.length === 0 || values.some((v) => v === null)) return null;
  return values.reduce<number>((a, v) => a + (v ?? 0), 0);
}

export async function consoleOverviewRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.db;
  app.get<{ Querystring: { month?: string } }>(
    '/api/v1/overview',
    {
      schema: {
        tags: ['console'],
        summary: "This month's usage, spend, measurements and refusals",
        querystring: ConsoleMonthQuery,
        response: { 200: envelopeOf(ConsoleOverview), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const orgId = sessionOf(req).orgId;
      const month = req.query.month ?? monthOf(ctx.clock.now());
      const { start, end } = monthBounds(month);
      const keys = await listOrgKeys(db, orgId);
      const usage = keys.length
        ? await db
            .selectFrom('usage_month')
            .select(['key_id', 'cloud_seconds', 'tokens_micro'])
            .where('month', '=', month)
            .where(
              'key_id',
              'in',
              keys.map((k) => k.id),
            )
            .execute()
        : [];
      const byKey = new Map(usage.map((u) => [u.key_id, u]));
      const perKey = keys.map((k) => ({
        keyId: k.id,
        name: k.name,
        status: k.status,
        cloudSeconds: Number(byKey.get(k.id)?.cloud_seconds ?? 0),
        quotaSecondsMonth: k.quotaSecondsMonth,
        tokensUsd: usdFromMicro(Number(byKey.get(k.id)?.tokens_micro ?? 0)),
        tokenQuotaMonthUsd: k.tokenQuotaMonthMicro === null ? null : usdFromMicro(k.tokenQuotaMonthMicro),
      }));
      const active = perKey.filter((k) => k.status === 'active');
      const inMonth = db
        .selectFrom('measurements')
        .where('org_id', '=', orgId)
        .where('created_at', '>=', start)
        .where('created_at', '<', end);
      const days = await inMonth
        .select((eb) => [DAY.as('day'), eb.fn.countAll<number>().as('n')])
        .groupBy(DAY)
        .orderBy(DAY)
        .execute();
      const levels = await inMonth
        .select((eb) => ['quality_level', eb.fn.countAll<number>().as('n')])
        .groupBy('quality_level')
        .execute();
      const qualityMix = { good: 0, fair: 0, poor: 0, unknown: 0 };
      for (const l of levels) {
        const k =
          l.quality_level === 'good' || l.quality_level === 'fair' || l.quality_level === 'poor'
            ? l.quality_level
            : 'unknown';
        qualityMix[k] += Number(l.n);
      }
      const refusals = await db
        .selectFrom('usage_log')
        .select((eb) => ['error_code', eb.fn.countAll<number>().as('n')])
        .where('key_id', 'in', (eb) => eb.selectFrom('api_keys').select('id').where('org_id', '=', orgId))
        .where('time', '>=', start)
        .where('time', '<', end)
        .where('status', '!=', 'success')
        .groupBy('error_code')
        .execute();
      return {
        ok: true,
        data: {
          month,
          cloudSeconds: {
            used: perKey.reduce((a, k) => a + k.cloudSeconds, 0),
            quota: summedCap(active.map((k) => k.quotaSecondsMonth)),
          },
          tokenSpendUsd: {
            used: usdFromMicro(perKey.reduce((a, k) => a + Math.round(k.tokensUsd * 1e6), 0)),
            cap: summedCap(active.map((k) => k.tokenQuotaMonthUsd)),
          },
          balanceUsd: balanceUsdOf(await getOrg(db, orgId)),
          measurementsPerDay: days.map((d) => ({
            day: new Date(Number(d.day) * DAY_MS).toISOString().slice(0, 10),
            count: Number(d.n),
          })),
          qualityMix,
          refusalsByCode: refusals
            .map((r) => ({ errorCode: r.error_code ?? 'unknown', count: Number(r.n) }))
            .sort((a, b) => b.count - a.count),
          keys: perKey,
        },
      };
    },
  );
}
