/**
 * Organization webhook endpoints and the delivery journal (issue 16, "Webhooks"; spec: Job
 * webhooks): the same domain code as `vitals-server webhooks`. Deliveries are sent by the
 * dispatcher (batch worker), so the test event and a redelivery answer 202 with the journal id.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import {
  ConsoleDeliveriesPage,
  ConsoleDeliveriesQuery,
  ConsoleDeliveryDetail,
  ConsoleDeliveryQueued,
  ConsoleEndpointCreate,
  ConsoleEndpointList,
  ConsoleEndpointSecret,
  ErrorEnvelope,
  ORG_WEBHOOK_LIMIT,
  envelopeOf,
} from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { createEndpoint, deleteEndpoint, EndpointError, listEndpoints, rotateEndpoint } from '../webhooks/endpoints.js';
import { attemptsOf, getDelivery, getEndpoint, listDeliveries, type EndpointRow } from '../webhooks/journal.js';
import { journalTest, redeliver } from '../webhooks/dispatcher.js';
import { sessionOf } from './guard.js';
import { deliveryView, endpointView } from './views.js';

const TAG = { tags: ['console'] };
const IdParams = Type.Object({ id: Type.String({ maxLength: 80 }) });
const CURSOR = /^(\d{1,15})\.(whd_[0-9a-f]{24})$/;
const Created = (data: Parameters<typeof envelopeOf>[0]) => ({ 201: envelopeOf(data), '4xx': ErrorEnvelope });
const Accepted = { 202: envelopeOf(ConsoleDeliveryQueued), '4xx': ErrorEnvelope };

export async function consoleWebhookRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.db;

  /** The organization's active endpoint, or a plain 404 (unknown, deleted or another's). */
  async function ownEndpoint(req: FastifyRequest<{ Params: { id: string } }>): Promise<EndpointRow> {
    const ep = await getEndpoint(db, req.params.id);
    if (!ep || ep.org_id !== sessionOf(req).orgId || ep.status !== 'active') throw notFound('webhook endpoint');
    return ep;
  }

  app.get(
    '/api/v1/webhooks',
    {
      schema: {
        ...TAG,
        summary: "The organization's webhook endpoints",
        response: { 200: envelopeOf(ConsoleEndpointList), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const items = await listEndpoints(ctx, sessionOf(req).orgId);
      return {
        ok: true,
        data: {
          items: items.map((e) => ({ ...e, created_at: e.createdAt, rotated_at: e.rotatedAt })).map(endpointView),
          limit: ORG_WEBHOOK_LIMIT,
        },
      };
    },
  );

  app.post<{ Body: { url: string } }>(
    '/api/v1/webhooks',
    {
      schema: {
        ...TAG,
        summary: 'Add a webhook endpoint (its whsec_ secret is in this answer only)',
        body: ConsoleEndpointCreate,
        response: Created(ConsoleEndpointSecret),
      },
    },
    async (req, reply) => {
      try {
        const { id, secret } = await createEndpoint(ctx, sessionOf(req).orgId, req.body.url);
        const ep = (await getEndpoint(db, id))!;
        return reply.code(201).send({ ok: true, data: { endpoint: endpointView(ep), secret } });
      } catch (err) {
        if (!(err instanceof EndpointError)) throw err;
        if (err.reason === 'limit')
          throw new ApiError('conflict', `an organization has at most ${ORG_WEBHOOK_LIMIT} webhook endpoints`);
        throw new ApiError('validation_error', err.message);
      }
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/webhooks/:id/rotate',
    {
      schema: {
        ...TAG,
        summary: "Rotate an endpoint's secret (the new one is in this answer only)",
        params: IdParams,
        response: { 200: envelopeOf(ConsoleEndpointSecret), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const ep = await ownEndpoint(req);
      const { secret } = await rotateEndpoint(ctx, ep.id);
      return { ok: true, data: { endpoint: endpointView((await getEndpoint(db, ep.id))!), secret } };
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/v1/webhooks/:id',
    {
      schema: { ...TAG, summary: 'Delete a webhook endpoint', params: IdParams, response: { '4xx': ErrorEnvelope } },
    },
    async (req, reply) => {
      const ep = await ownEndpoint(req);
      await deleteEndpoint(ctx, ep.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/webhooks/:id/test',
    {
      schema: { ...TAG, summary: 'Send a webhook.test event (journaled)', params: IdParams, response: Accepted },
    },
    async (req, reply) => {
      const ep = await ownEndpoint(req);
      const deliveryId = (await journalTest(ctx, ep.id))!;
      return reply.code(202).send({ ok: true, data: { deliveryId } });
    },
  );

  app.get<{ Querystring: Static<typeof ConsoleDeliveriesQuery> }>(
    '/api/v1/webhooks/deliveries',
    {
      schema: {
        ...TAG,
        summary: 'The delivery journal, newest first',
        querystring: ConsoleDeliveriesQuery,
        response: { 200: envelopeOf(ConsoleDeliveriesPage), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const { endpointId, event, outcome, cursor, limit } = req.query;
      let before: { createdAt: number; id: string } | undefined;
      if (cursor !== undefined) {
        const m = CURSOR.exec(cursor);
        if (!m) throw new ApiError('validation_error', 'cursor must be a nextCursor of this route');
        before = { createdAt: Number(m[1]), id: m[2] };
      }
      const rows = await listDeliveries(db, {
        orgId: sessionOf(req).orgId,
        endpointId,
        event,
        status: outcome,
        before,
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const nextCursor = rows.length > limit && last ? `${last.created_at}.${last.id}` : null;
      return { ok: true, data: { items: page.map(deliveryView), nextCursor } };
    },
  );

  /** The organization's delivery, or a plain 404. */
  async function ownDelivery(req: FastifyRequest<{ Params: { id: string } }>) {
    const d = await getDelivery(db, req.params.id);
    if (!d || d.org_id !== sessionOf(req).orgId) throw notFound('delivery');
    return d;
  }

  app.get<{ Params: { id: string } }>(
    '/api/v1/webhooks/deliveries/:id',
    {
      schema: {
        ...TAG,
        summary: 'One delivery with every attempt',
        params: IdParams,
        response: { 200: envelopeOf(ConsoleDeliveryDetail), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const d = await ownDelivery(req);
      const attemptLog = (await attemptsOf(db, d.id)).map((a) => ({
        attempt: a.attempt,
        at: a.at,
        ok: a.ok,
        httpStatus: a.status_code === null ? null : Number(a.status_code),
        error: a.error,
        responseTimeMs: a.response_ms === null ? null : Number(a.response_ms),
      }));
      return { ok: true, data: { delivery: deliveryView(d), attemptLog } };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/v1/webhooks/deliveries/:id/redeliver',
    {
      schema: {
        ...TAG,
        summary: "Deliver again (the body is regenerated from the job's current state)",
        params: IdParams,
        response: Accepted,
      },
    },
    async (req, reply) => {
      const d = await ownDelivery(req);
      const deliveryId = (await redeliver(ctx, d.id))!;
      return reply.code(202).send({ ok: true, data: { deliveryId } });
    },
  );
}
