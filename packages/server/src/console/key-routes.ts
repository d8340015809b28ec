/**
 * API keys of the signed-in organization (issue 16, "API keys"): list, create (the secret shown
 * once, only its SHA-256 stored), change. The same store functions as `vitals-server keys`.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  ConsoleKeyCreate,
  ConsoleKeyCreated,
  ConsoleKeyList,
  ConsoleKeyOne,
  ConsoleKeyPatch,
  ErrorEnvelope,
  envelopeOf,
} from '@vitals/protocol';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import { notFound } from '../errors.js';
import type { Database } from '../store/schema.js';
import { createKey, listOrgKeys, microFromUsd, updateKey } from '../store/orgs-keys.js';
import { sessionOf } from './guard.js';
import { keyView } from './views.js';

const TAG = { tags: ['console'] };
const KeyParams = Type.Object({ keyId: Type.String({ maxLength: 80 }) });
const usdToMicro = (v: number | null | undefined) =>
  v === undefined ? undefined : v === null ? null : microFromUsd(v);

/** When each key last made a successful call (the usage log), by key id. */
async function lastUsed(db: Kysely<Database>, keyIds: string[]): Promise<Map<string, number>> {
  if (keyIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('usage_log')
    .select((eb) => ['key_id', eb.fn.max('time').as('at')])
    .where('key_id', 'in', keyIds)
    .where('status', '=', 'success')
    .groupBy('key_id')
    .execute();
  return new Map(rows.map((r) => [r.key_id as string, Number(r.at)]));
}

export async function consoleKeyRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.db;

  app.get(
    '/api/v1/keys',
    {
      schema: {
        ...TAG,
        summary: "The organization's API keys, newest first",
        response: { 200: envelopeOf(ConsoleKeyList), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const keys = await listOrgKeys(db, sessionOf(req).orgId);
      const used = await lastUsed(
        db,
        keys.map((k) => k.id),
      );
      return { ok: true, data: { items: keys.map((k) => keyView(k, used.get(k.id) ?? null)) } };
    },
  );

  app.post<{ Body: ConsoleKeyCreate }>(
    '/api/v1/keys',
    {
      schema: {
        ...TAG,
        summary: 'Create an API key (its secret is in this answer only)',
        body: ConsoleKeyCreate,
        response: { 201: envelopeOf(ConsoleKeyCreated), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const { key, secret } = await createKey(
        db,
        {
          orgId: sessionOf(req).orgId,
          name: b.name ?? null,
          mode: b.mode,
          expiresAt: b.expiresAt ?? null,
          rateLimitPerMin: b.rateLimitPerMin,
          quotaSecondsMonth: b.quotaSecondsMonth ?? null,
          tokenQuotaMonthMicro: usdToMicro(b.tokenQuotaMonthUsd) ?? null,
          features: b.features,
        },
        ctx.clock.now(),
      );
      return reply.code(201).send({ ok: true, data: { key: keyView(key, null), secret } });
    },
  );

  app.patch<{ Params: { keyId: string }; Body: ConsoleKeyPatch }>(
    '/api/v1/keys/:keyId',
    {
      schema: {
        ...TAG,
        summary: 'Change an API key (status, limits, expiry, features, name)',
        params: KeyParams,
        body: ConsoleKeyPatch,
        response: { 200: envelopeOf(ConsoleKeyOne), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const b = req.body;
      const key = await updateKey(
        db,
        req.params.keyId,
        {
          name: b.name,
          status: b.status,
          expiresAt: b.expiresAt,
          rateLimitPerMin: b.rateLimitPerMin,
          quotaSecondsMonth: b.quotaSecondsMonth,
          tokenQuotaMonthMicro: usdToMicro(b.tokenQuotaMonthUsd),
          features: b.features,
        },
        sessionOf(req).orgId,
      );
      // Another organization's key is as unknown as a key that never existed.
      if (!key) throw notFound('key');
      ctx.keys.invalidate(key.id);
      const used = await lastUsed(db, [key.id]);
      return { ok: true, data: { key: keyView(key, used.get(key.id) ?? null) } };
    },
  );
}
