/**
 * The session fallback endpoints (CLARIFICATIONS 24), authorized by the session token, not NCS1:
 * POST /sdk/v1/cloud/sessions/:id/frames (raw frames file, streamed, at most 64 MB; 6 per 10 min
 * per session) and GET /sdk/v1/cloud/sessions/:id/result (60 per minute per session). Rules in
 * batch/fallback.ts and docs/batch.md.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { CloudJob, ErrorEnvelope, envelopeOf } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { jobToWire } from '../domain/jobs.js';
import { acceptFallback, authorizeSession, limitPoll, limitUpload, sessionResult } from '../batch/fallback.js';

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });

export async function sessionFallbackRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get<{ Params: { id: string } }>(
    '/sdk/v1/cloud/sessions/:id/result',
    {
      schema: {
        summary: 'The job that now represents a session (session token)',
        params: Params,
        response: { 200: envelopeOf(CloudJob), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const auth = await authorizeSession(ctx, req, req.params.id);
      reply.headers(limitPoll(ctx, auth.session.id));
      const job = await sessionResult(ctx, auth.session);
      return { ok: true, data: await jobToWire(ctx.db.db, job) };
    },
  );

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // The frames file streams from the socket to the object store (never buffered whole).
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    scope.post<{ Params: { id: string } }>(
      '/sdk/v1/cloud/sessions/:id/frames',
      {
        schema: {
          summary: 'Upload a session fallback frames file (session token)',
          params: Params,
          response: { 200: envelopeOf(CloudJob), 201: envelopeOf(CloudJob), '4xx': ErrorEnvelope },
        },
      },
      async (req, reply) => {
        const auth = await authorizeSession(ctx, req, req.params.id);
        reply.headers(limitUpload(ctx, auth.session.id));
        const { job, created } = await acceptFallback(ctx, auth, req);
        return reply.code(created ? 201 : 200).send({ ok: true, data: await jobToWire(ctx.db.db, job) });
      },
    );
  });
}
