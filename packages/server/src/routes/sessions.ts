/**
 * POST /sdk/v1/cloud/sessions (spec: POST /sdk/v1/cloud/sessions, Session). Mints a streaming
 * session: a `cloud_jobs` row in mode `stream`, status `pending` (readable as a job), and a session
 * token carrying its id, duration and features (domain/session-token.ts, docs/streaming.md).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ErrorEnvelope, FEATURES, Session, SessionCreate, envelopeOf, newJobId } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { assertCanSpend } from '../domain/jobs.js';
import { signSessionToken } from '../domain/session-token.js';
import { insertJob, newJobRow } from '../store/jobs.js';
import { FRAME_SPEC } from '../stream/frame-spec.js';
import { STREAM_PATH } from '../stream/paths.js';

/** Requested features (omitted = all), unknown names dropped, limited to what the key may use. */
export function sessionFeatures(requested: readonly string[] | undefined, allowed: readonly string[]): string[] {
  const wanted = requested ?? FEATURES;
  return FEATURES.filter((f) => wanted.includes(f) && allowed.includes(f));
}

/** `wsUrl` from the advertised base address (VITALS_PUBLIC_URL or the listening address). */
export function wsUrlFor(ctx: AppContext, req: FastifyRequest): string {
  const base = ctx.publicUrl ?? `${req.protocol}://${req.host}`;
  return base.replace(/^http(s?):\/\//, 'ws$1://').replace(/\/+$/, '') + STREAM_PATH;
}

export async function sessionRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post<{ Body: SessionCreate }>(
    '/sdk/v1/cloud/sessions',
    {
      config: { signed: true },
      schema: {
        summary: 'Mint a cloud streaming session',
        body: SessionCreate,
        response: { 201: envelopeOf(Session), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const key = req.auth!.key;
      const body = req.body;
      // The schema bounds durationSec to 20..180; the token carries whole seconds.
      const durationSec = Math.floor(body.durationSec);
      const features = sessionFeatures(body.features, key.features);
      await assertCanSpend(ctx, key, durationSec, features);

      const now = ctx.clock.now();
      const sessionId = newJobId();
      await insertJob(
        ctx.db.db,
        newJobRow({
          id: sessionId,
          key_id: key.id,
          org_id: key.orgId,
          mode: 'stream',
          status: 'pending',
          created_at: now,
          user_ref: body.userRef ?? null,
          client_ref: body.clientRef ?? null,
          platform: body.platform,
          features: JSON.stringify(features),
          duration_sec: durationSec,
        }),
      );
      const iat = Math.floor(now / 1000);
      const sessionToken = signSessionToken(ctx.serverSecret, {
        sid: sessionId,
        kid: key.id,
        dur: durationSec,
        feat: features,
        iat,
        exp: iat + ctx.config.sessionTokenTtlSec,
      });
      return reply.code(201).send({
        ok: true,
        data: {
          sessionToken,
          sessionId,
          wsUrl: wsUrlFor(ctx, req),
          maxDurationSec: durationSec,
          frameSpec: FRAME_SPEC,
        },
      });
    },
  );
}
