/**
 * End users of the organization's keys (issue 16, "End users"): the list, a user's history and
 * baseline, and a measurement's detail with its assessment and (when persisted) the raw PPG. The
 * same store and domain code as the key's own `/sdk/v1/users` routes; a user is a key's `userRef`,
 * so the routes name the key.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import {
  BASELINE_CAP,
  BASELINE_WINDOW_DAYS,
  Baseline,
  ConsoleUserMeasurementsPage,
  ConsoleUserMeasurementsQuery,
  ConsoleUserParams,
  ConsoleUsersPage,
  ConsoleUsersQuery,
  ErrorEnvelope,
  Measurement,
  envelopeOf,
} from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { notFound } from '../errors.js';
import { getKey } from '../store/orgs-keys.js';
import { baselineRows, getMeasurement, listUserMeasurements, listUsers } from '../store/measurements.js';
import { computeBaseline } from '../domain/baseline.js';
import { present } from '../domain/measurement.js';
import { assessmentFor } from '../routes/measurements.js';
import { sessionOf } from './guard.js';

const TAG = { tags: ['console'] };
type UserParams = Static<typeof ConsoleUserParams>;

export async function consoleUserRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.db;

  /** A key id of the request's organization, or a plain 404. */
  async function ownKey(req: FastifyRequest, keyId: string): Promise<string> {
    if ((await getKey(db, keyId))?.orgId !== sessionOf(req).orgId) throw notFound('key');
    return keyId;
  }

  app.get<{ Querystring: Static<typeof ConsoleUsersQuery> }>(
    '/api/v1/users',
    {
      schema: {
        ...TAG,
        summary: "End users of the organization's keys, most recently active first",
        querystring: ConsoleUsersQuery,
        response: { 200: envelopeOf(ConsoleUsersPage), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const { keyId, page, perPage } = req.query;
      const orgId = sessionOf(req).orgId;
      if (keyId !== undefined) await ownKey(req, keyId);
      const { items, total } = await listUsers(db, { orgId, keyId }, page, perPage);
      const round = (q: number | null) => (q === null ? null : Math.round(q * 1000) / 1000);
      return {
        ok: true,
        data: { items: items.map((u) => ({ ...u, avgQuality: round(u.avgQuality) })), total, page, perPage },
      };
    },
  );

  app.get<{ Params: UserParams; Querystring: Static<typeof ConsoleUserMeasurementsQuery> }>(
    '/api/v1/users/:keyId/:userRef/measurements',
    {
      schema: {
        ...TAG,
        summary: "A user's measurements, newest first",
        params: ConsoleUserParams,
        querystring: ConsoleUserMeasurementsQuery,
        response: { 200: envelopeOf(ConsoleUserMeasurementsPage), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const keyId = await ownKey(req, req.params.keyId);
      const { page, perPage, from, to } = req.query;
      const { items, total } = await listUserMeasurements(db, keyId, req.params.userRef, { page, perPage, from, to });
      return { ok: true, data: { items, total, page, perPage } };
    },
  );

  app.get<{ Params: UserParams }>(
    '/api/v1/users/:keyId/:userRef/baseline',
    {
      schema: {
        ...TAG,
        summary: "A user's personal baseline (median ± 2·MAD per metric)",
        params: ConsoleUserParams,
        response: { 200: envelopeOf(Baseline), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const keyId = await ownKey(req, req.params.keyId);
      const since = ctx.clock.now() - BASELINE_WINDOW_DAYS * 86_400_000;
      const rows = await baselineRows(db, keyId, req.params.userRef, since, BASELINE_CAP);
      return { ok: true, data: computeBaseline(req.params.userRef, rows) };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/api/v1/measurements/:id',
    {
      schema: {
        ...TAG,
        summary: 'One measurement with its assessment and, when persisted, the raw PPG',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: envelopeOf(Measurement), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const stored = await getMeasurement(db, { orgId: sessionOf(req).orgId }, req.params.id);
      if (!stored) throw notFound('measurement');
      const data = present(stored.doc, stored.raw, { advanced: true });
      data.assessment = (await assessmentFor(ctx, stored.doc.keyId, stored.doc)) as Measurement['assessment'];
      return { ok: true, data };
    },
  );
}
