/** POST /sdk/v1/cloud/jobs and GET /sdk/v1/cloud/jobs/:jobId (spec: Endpoints). */
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { CloudJob, ErrorEnvelope, JobCreate, envelopeOf } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { jobToWire } from '../domain/jobs.js';
import { getJobForKey } from '../store/jobs.js';
import { notFound } from '../errors.js';
import { createJob } from '../batch/create-job.js';

export async function jobRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post<{ Body: JobCreate }>(
    '/sdk/v1/cloud/jobs',
    {
      config: { signed: true },
      schema: {
        summary:
          'Create a batch job from an uploaded object (201; an idempotent repeat answers 200 with the job as it is now)',
        body: JobCreate,
        response: { 200: envelopeOf(CloudJob), 201: envelopeOf(CloudJob), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const { job, created } = await createJob(ctx, req.auth!.key, req.body);
      // A new job answers 201; the idempotent repeat answers 200 with the job as it is now (CLARIFICATIONS 19).
      return reply.code(created ? 201 : 200).send({ ok: true, data: await jobToWire(ctx.db.db, job) });
    },
  );

  app.get<{ Params: { jobId: string } }>(
    '/sdk/v1/cloud/jobs/:jobId',
    {
      config: { signed: true },
      schema: {
        summary: 'Read a job or a streaming session',
        params: Type.Object({ jobId: Type.String({ maxLength: 64 }) }),
        response: { 200: envelopeOf(CloudJob), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      // Another key's job is a plain 404, indistinguishable from an unknown id.
      const row = await getJobForKey(ctx.db.db, req.auth!.key.id, req.params.jobId);
      if (!row) throw notFound('job');
      return { ok: true, data: await jobToWire(ctx.db.db, row) };
    },
  );
}
