/** POST /sdk/v1/measurements and GET /sdk/v1/measurements/{id}. */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  BASELINE_CAP,
  BASELINE_WINDOW_DAYS,
  ErrorEnvelope,
  Measurement,
  MeasurementSubmission,
  envelopeOf,
} from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { fromSubmission, present } from '../domain/measurement.js';
import { assess } from '../domain/assessment.js';
import { computeBaseline } from '../domain/baseline.js';
import { baselineRows, getMeasurement, measurementRow } from '../store/measurements.js';
import { notFound } from '../errors.js';
import { successRow } from '../auth/signature.js';
import { usageLogRow } from '../store/usage-log.js';
import type { InsertRow } from '../store/insert-all.js';
import { newMeasurementId } from '../ids.js';

const Advanced = Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')]));
const Include = Type.Optional(Type.Literal('assessment'));

export async function measurementRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post<{ Body: MeasurementSubmission; Querystring: { advanced?: string } }>(
    '/sdk/v1/measurements',
    {
      // The nonce is spent with the measurement, in one write (signature.ts, `deferNonce`). A body
      // or query that fails validation reaches the handler (attachValidation), which settles the
      // nonce before answering 400, so a replay is still nonce_reused first (spec: Authentication 3).
      config: { signed: true, deferNonce: true },
      attachValidation: true,
      schema: {
        summary: 'Store an on-device measurement',
        querystring: Type.Object({ advanced: Advanced }),
        body: MeasurementSubmission,
        response: { 201: envelopeOf(Measurement), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const nonce = req.deferredNonce;
      try {
        if (req.validationError) throw req.validationError;
        const key = req.auth!.key;
        const body = req.body;
        const advanced = req.query.advanced === 'true' || body.includeAdvanced === true;
        const now = ctx.clock.now();
        const m = fromSubmission(body, {
          id: newMeasurementId(),
          keyId: key.id,
          requestId: String(req.id),
          createdAt: now,
        });
        const raw = advanced && body.raw ? body.raw : null;
        // The nonce, the measurement and its usage row commit together: none is stored without the others.
        const rows: InsertRow[] = [
          { table: 'measurements', values: measurementRow(m, raw, key.orgId, now) },
          {
            table: 'usage_log',
            values: usageLogRow(key.id, successRow(req, ctx.clock.now(), m.quality?.level ?? null)),
          },
        ];
        if (nonce) await nonce.stored(await ctx.db.spendNonceAndInsert(nonce.spend, rows));
        else await ctx.db.insertAll(rows);
        req.usageRecorded = true;
        return reply.code(201).send({ ok: true, data: present(m, raw, { advanced }) });
      } catch (err) {
        // Any other answer waits for the nonce: a replay is refused as nonce_reused instead.
        await nonce?.settle();
        throw err;
      }
    },
  );

  app.get<{ Params: { id: string }; Querystring: { advanced?: string; include?: string } }>(
    '/sdk/v1/measurements/:id',
    {
      config: { signed: true },
      schema: {
        summary: 'Read one stored measurement',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        querystring: Type.Object({ advanced: Advanced, include: Include }),
        response: { 200: envelopeOf(Measurement), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const key = req.auth!.key;
      const stored = await getMeasurement(ctx.db.db, key.id, req.params.id);
      // Another key's measurement is a plain 404, indistinguishable from an unknown id.
      if (!stored) throw notFound('measurement');
      const data = present(stored.doc, stored.raw, { advanced: req.query.advanced === 'true' });
      if (req.query.include === 'assessment') data.assessment = await assessmentFor(ctx, key.id, stored.doc);
      return { ok: true, data };
    },
  );
}

export async function assessmentFor(ctx: AppContext, keyId: string, m: Measurement): Promise<unknown> {
  let baseline = null;
  if (m.userRef) {
    const since = ctx.clock.now() - BASELINE_WINDOW_DAYS * 86_400_000;
    baseline = computeBaseline(m.userRef, await baselineRows(ctx.db.db, keyId, m.userRef, since, BASELINE_CAP));
  }
  return assess(m, baseline);
}
