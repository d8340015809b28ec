/**
 * POST /sdk/v1/cloud/uploads/presign (signed) and PUT {uploadUrl} (the URL is the credential).
 * The PUT lives in its own encapsulated scope whose content-type parser hands the request stream
 * through untouched: the body is never buffered, it streams to the object store with the kind's
 * size limit enforced on the way (413 `object_too_large`) and its SHA-256 computed as it goes.
 * The URL is never logged (app.ts logs route patterns) and never echoed in an error.
 */
import { insertUploadSlot } from '../batch/upload-rows.js';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import {
  ErrorEnvelope,
  FRAMES_CONTENT_TYPE,
  FRAMES_MAX_BYTES,
  PresignRequest,
  Upload,
  VIDEO_CONTENT_TYPES,
  VIDEO_MAX_BYTES,
  envelopeOf,
  newObjectKey,
} from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { batchOf } from '../batch/batch-runtime.js';
import { signUploadUrl, verifyUploadUrl } from '../batch/upload-url.js';
import { ObjectTooLargeError } from '../objects/object-store.js';

export const maxBytesOf = (kind: string): number => (kind === 'video' ? VIDEO_MAX_BYTES : FRAMES_MAX_BYTES);

function contentTypeFor(kind: 'frames' | 'video', given: string | undefined): string {
  const ct = (given ?? (kind === 'frames' ? FRAMES_CONTENT_TYPE : 'video/mp4')).toLowerCase();
  const ok = kind === 'frames' ? ct === FRAMES_CONTENT_TYPE : (VIDEO_CONTENT_TYPES as readonly string[]).includes(ct);
  if (!ok)
    throw new ApiError(
      'invalid_content_type',
      `contentType must be ${kind === 'frames' ? FRAMES_CONTENT_TYPE : VIDEO_CONTENT_TYPES.join(', ')} for kind ${kind}`,
    );
  return ct;
}

/** The media type of a Content-Type header, without parameters, lower case. */
const mediaType = (h: unknown): string => (typeof h === 'string' ? h.split(';')[0].trim().toLowerCase() : '');

export async function uploadRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post<{ Body: { kind: 'frames' | 'video'; contentType?: string } }>(
    '/sdk/v1/cloud/uploads/presign',
    {
      config: { signed: true },
      schema: {
        summary: 'Presign an upload',
        body: PresignRequest,
        response: { 200: envelopeOf(Upload), '4xx': ErrorEnvelope },
      },
    },
    async (req) => {
      const key = req.auth!.key;
      const { kind } = req.body;
      const contentType = contentTypeFor(kind, req.body.contentType);
      const now = ctx.clock.now();
      const objectKey = newObjectKey();
      const expiresAt = now + ctx.config.presignTtlSec * 1000;
      const maxBytes = maxBytesOf(kind);
      await insertUploadSlot(ctx, { objectKey, key, kind, contentType, maxBytes, urlExpiresAt: expiresAt, now });
      const base = ctx.publicUrl ?? `${req.protocol}://${req.host}`;
      const uploadUrl = signUploadUrl(base, ctx.serverSecret, { objectKey, kind, contentType, expiresAt });
      return { ok: true, data: { uploadUrl, objectKey, expiresAt, contentType, maxBytes } };
    },
  );

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Hand the stream through; the handler consumes it (nothing is buffered).
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    scope.put<{ Params: { objectKey: string } }>(
      '/sdk/v1/cloud/uploads/:objectKey',
      { schema: { hide: true, params: Type.Object({ objectKey: Type.String({ maxLength: 64 }) }) } },
      async (req, reply) => {
        const now = ctx.clock.now();
        const check = verifyUploadUrl(
          ctx.serverSecret,
          req.params.objectKey,
          req.query as Record<string, unknown>,
          now,
        );
        if (!check.ok)
          throw new ApiError(
            'unauthorized',
            check.reason === 'expired' ? 'upload URL has expired' : 'upload URL is not valid',
          );
        const g = check.grant;
        const row = await ctx.db.db
          .selectFrom('uploads')
          .selectAll()
          .where('object_key', '=', g.objectKey)
          .executeTakeFirst();
        if (!row || row.deleted_at !== null) throw new ApiError('object_not_found', 'upload no longer exists');
        if (row.job_id) throw new ApiError('conflict', 'the object already belongs to a job');
        if (mediaType(req.headers['content-type']) !== g.contentType)
          throw new ApiError('invalid_content_type', `Content-Type must be ${g.contentType}`);
        const maxBytes = Number(row.max_bytes);
        const declared = Number(req.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          reply.header('connection', 'close');
          throw new ApiError('object_too_large', `the ${g.kind} limit is ${maxBytes} bytes`);
        }
        let stored;
        try {
          stored = await batchOf(ctx).objects.put(g.objectKey, req.raw, { maxBytes });
        } catch (err) {
          if (err instanceof ObjectTooLargeError) {
            reply.header('connection', 'close');
            throw new ApiError('object_too_large', `the ${g.kind} limit is ${maxBytes} bytes`);
          }
          throw err;
        }
        await ctx.db.db
          .updateTable('uploads')
          .set({ uploaded_at: ctx.clock.now(), size: stored.size, sha256: stored.sha256 })
          .where('object_key', '=', g.objectKey)
          .execute();
        return reply
          .code(200)
          .send({ ok: true, data: { objectKey: g.objectKey, size: stored.size, sha256: stored.sha256 } });
      },
    );
  });
}
