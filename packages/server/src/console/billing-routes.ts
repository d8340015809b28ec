/**
 * Billing (issue 16, "Billing"): the balance (or unmetered), the pricing of GET /api/v1/pricing,
 * spend by month, and buying a pack through the operator's payment provider (payments.ts).
 */
import type { FastifyInstance } from 'fastify';
import {
  ConsoleBilling,
  ConsolePurchaseCreate,
  ConsolePurchaseDone,
  ErrorEnvelope,
  envelopeOf,
} from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { PRICING } from '../domain/pricing.js';
import { getOrg } from '../store/orgs-keys.js';
import { buyPack, listPurchases, PurchaseError, spendByMonth } from './billing.js';
import { noPayments } from './payments.js';
import { sessionOf } from './guard.js';
import { balanceUsdOf } from './views.js';

const TAG = { tags: ['console'] };

export async function consoleBillingRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.db;
  const provider = ctx.payments ?? noPayments;

  app.get(
    '/api/v1/billing',
    {
      schema: {
        ...TAG,
        summary: 'Balance, pricing, spend by month and purchases',
        response: { 200: envelopeOf(ConsoleBilling), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const orgId = sessionOf(req).orgId;
      return {
        ok: true,
        data: {
          balanceUsd: balanceUsdOf(await getOrg(db, orgId)),
          pricing: PRICING,
          spendByMonth: await spendByMonth(db, orgId),
          purchase: { provider: provider.name, enabled: provider.enabled },
          purchases: await listPurchases(db, orgId),
        },
      };
    },
  );

  app.post<{ Body: { packId: string } }>(
    '/api/v1/billing/purchases',
    {
      schema: {
        ...TAG,
        summary: "Buy a token pack through the operator's payment provider",
        body: ConsolePurchaseCreate,
        response: { 201: envelopeOf(ConsolePurchaseDone), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const session = sessionOf(req);
      const pack = PRICING.packs.find((p) => p.id === req.body.packId);
      if (!pack)
        throw new ApiError('validation_error', `packId must be one of ${PRICING.packs.map((p) => p.id).join(', ')}`);
      const org = await getOrg(db, session.orgId);
      try {
        const purchase = await buyPack(
          db,
          provider,
          { orgId: session.orgId, accountId: session.accountId, pack, metered: balanceUsdOf(org) !== null },
          ctx.clock.now(),
        );
        const balanceUsd = balanceUsdOf(await getOrg(db, session.orgId));
        return reply.code(201).send({ ok: true, data: { purchase, balanceUsd } });
      } catch (err) {
        if (!(err instanceof PurchaseError)) throw err;
        if (err.reason === 'disabled') throw new ApiError('forbidden', err.message);
        if (err.reason === 'unmetered') throw new ApiError('conflict', err.message);
        throw new ApiError('conflict', `the payment did not go through: ${err.message}`);
      }
    },
  );
}
