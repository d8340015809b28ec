/**
 * The usage log of the organization's keys (issue 16, "Usage"): filtered by key, status,
 * `errorCode` and time; newest first for browsing (`before`), oldest first after a cursor for the
 * live tail (`after`), which the page polls (docs/console.md, "Usage").
 */
import type { FastifyInstance } from 'fastify';
import { ConsoleUsagePage, ConsoleUsageQuery, ErrorEnvelope, ZERO_LOG_ID, envelopeOf } from '@vitals/protocol';
import type { Static } from '@sinclair/typebox';
import type { AppContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { getKey } from '../store/orgs-keys.js';
import { listOrgUsage } from '../store/usage-log.js';
import { sessionOf } from './guard.js';

const CURSOR = /^(\d{1,15})\.(log_[0-9a-f]{24})$/;

function parseCursor(name: string, raw: string | undefined): { time: number; id: string } | undefined {
  if (raw === undefined) return undefined;
  const m = CURSOR.exec(raw);
  if (!m) throw new ApiError('validation_error', `${name} must be a cursor of this route (<time>.<log id>)`);
  return { time: Number(m[1]), id: m[2] };
}

export async function consoleUsageRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get<{ Querystring: Static<typeof ConsoleUsageQuery> }>(
    '/api/v1/usage',
    {
      schema: {
        tags: ['console'],
        summary: "The usage log of the organization's keys",
        querystring: ConsoleUsageQuery,
        response: { 200: envelopeOf(ConsoleUsagePage), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const orgId = sessionOf(req).orgId;
      const { keyId, status, errorCode, from, to, limit } = req.query;
      if (keyId !== undefined && (await getKey(ctx.db.db, keyId))?.orgId !== orgId) throw notFound('key');
      const before = parseCursor('before', req.query.before);
      const after = parseCursor('after', req.query.after);
      if (before && after) throw new ApiError('validation_error', 'before and after cannot be combined');
      const items = await listOrgUsage(ctx.db.db, { orgId, keyId, status, errorCode, from, to, before, after, limit });
      const cursorOf = (r: { time: number; id: string }) => `${r.time}.${r.id}`;
      if (after) {
        const last = items[items.length - 1];
        return { ok: true, data: { items, nextCursor: null, tailCursor: last ? cursorOf(last) : req.query.after! } };
      }
      const newest = items[0];
      const oldest = items[items.length - 1];
      // The first page's newest row starts the tail; an empty first page tails from now.
      const tailCursor = before ? req.query.before! : newest ? cursorOf(newest) : `${ctx.clock.now()}.${ZERO_LOG_ID}`;
      const nextCursor = items.length === limit && oldest ? cursorOf(oldest) : null;
      return { ok: true, data: { items, nextCursor, tailCursor } };
    },
  );
}
