/**
 * GET /sdk/v1/logs: keyset paging over (time, id), oldest first (spec: GET /sdk/v1/logs;
 * CLARIFICATIONS 14). `cursor` wins over `sinceTime`; an empty page repeats the cursor sent.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ErrorEnvelope, LOGS_LIMIT_DEFAULT, LogsPage, ZERO_LOG_ID, envelopeOf } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { listUsage } from '../store/usage-log.js';
import { ApiError } from '../errors.js';

const CURSOR = /^(\d{1,15})\.(log_[0-9a-f]{24})$/;

export async function logRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get<{ Querystring: { limit: number; sinceTime?: number; cursor?: string } }>(
    '/sdk/v1/logs',
    {
      config: { signed: true, usageLogRead: true },
      schema: {
        summary: 'The usage log of this key',
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 200, default: LOGS_LIMIT_DEFAULT }),
          sinceTime: Type.Optional(Type.Integer({ minimum: 0 })),
          cursor: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: {
          200: envelopeOf(LogsPage),
          '4xx': ErrorEnvelope,
        },
      },
    },
    async (req) => {
      const { limit, sinceTime, cursor } = req.query;
      let after: { time: number; id: string; inclusiveTime: boolean };
      if (cursor !== undefined) {
        const m = CURSOR.exec(cursor);
        if (!m) throw new ApiError('validation_error', 'cursor must be <time>.<id>');
        after = { time: Number(m[1]), id: m[2], inclusiveTime: false };
      } else {
        after = { time: sinceTime ?? 0, id: ZERO_LOG_ID, inclusiveTime: true };
      }
      const items = await listUsage(ctx.db.db, req.auth!.key.id, after, limit);
      const last = items[items.length - 1];
      const nextCursor = last ? `${last.time}.${last.id}` : (cursor ?? `${sinceTime ?? 0}.${ZERO_LOG_ID}`);
      return { ok: true, data: { items, nextCursor, serverTime: ctx.clock.now() } };
    },
  );
}
