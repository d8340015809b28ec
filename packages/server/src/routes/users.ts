/** GET /sdk/v1/users, /users/{ref}/measurements and /users/{ref}/baseline, all scoped to the key. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  BASELINE_CAP,
  BASELINE_WINDOW_DAYS,
  Baseline,
  ErrorEnvelope,
  PAGE_SIZE_DEFAULT,
  UserMeasurementsPage,
  UserRef,
  UsersPage,
  envelopeOf,
} from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { baselineRows, listUserMeasurements, listUsers } from '../store/measurements.js';
import { computeBaseline } from '../domain/baseline.js';
import { assessmentFor } from './measurements.js';

const Page = Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 });
const PerPage = Type.Integer({ minimum: 1, maximum: 100, default: PAGE_SIZE_DEFAULT });
const EpochMs = Type.Integer({ minimum: 0 });
const RefParams = Type.Object({ ref: UserRef });

export async function userRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get<{ Querystring: { page: number; perPage: number } }>(
    '/sdk/v1/users',
    {
      config: { signed: true },
      schema: {
        summary: 'End users of this key, most recently active first',
        querystring: Type.Object({ page: Page, perPage: PerPage }),
        response: {
          200: envelopeOf(UsersPage),
          '4xx': ErrorEnvelope,
        },
      },
    },
    async (req) => {
      const { page, perPage } = req.query;
      const { items, total } = await listUsers(ctx.db.db, req.auth!.key.id, page, perPage);
      return {
        ok: true,
        data: {
          items: items.map(({ keyId: _keyId, ...u }) => ({
            ...u,
            avgQuality: u.avgQuality === null ? null : Math.round(u.avgQuality * 1000) / 1000,
          })),
          total,
          page,
          perPage,
        },
      };
    },
  );

  app.get<{
    Params: { ref: string };
    Querystring: { page: number; perPage: number; from?: number; to?: number; include?: string };
  }>(
    '/sdk/v1/users/:ref/measurements',
    {
      config: { signed: true },
      schema: {
        summary: "A user's measurements, newest first",
        params: RefParams,
        querystring: Type.Object({
          page: Page,
          perPage: PerPage,
          from: Type.Optional(EpochMs),
          to: Type.Optional(EpochMs),
          include: Type.Optional(Type.Literal('assessment')),
        }),
        response: {
          200: envelopeOf(UserMeasurementsPage),
          '4xx': ErrorEnvelope,
        },
      },
    },
    async (req) => {
      const keyId = req.auth!.key.id;
      const { page, perPage, from, to } = req.query;
      const { items, total } = await listUserMeasurements(ctx.db.db, keyId, req.params.ref, {
        page,
        perPage,
        from,
        to,
      });
      if (req.query.include === 'assessment') {
        for (const m of items) m.assessment = await assessmentFor(ctx, keyId, m);
      }
      return { ok: true, data: { items, total, page, perPage } };
    },
  );

  app.get<{ Params: { ref: string } }>(
    '/sdk/v1/users/:ref/baseline',
    {
      config: { signed: true },
      schema: {
        summary: "A user's personal baseline",
        params: RefParams,
        response: { 200: envelopeOf(Baseline), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const since = ctx.clock.now() - BASELINE_WINDOW_DAYS * 86_400_000;
      const rows = await baselineRows(ctx.db.db, req.auth!.key.id, req.params.ref, since, BASELINE_CAP);
      return { ok: true, data: computeBaseline(req.params.ref, rows) };
    },
  );
}
