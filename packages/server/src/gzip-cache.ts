/**
 * gzip for the service's static payloads: the capture code (`/capture/*`) and the model bundle's
 * files. Each is compressed once per content (keyed by its hash) and the result kept, so a page load
 * costs no compression on the request path; a file that gzip does not shrink by at least
 * MIN_SAVING (already-compressed images) is sent as it is. API JSON is not
 * compressed: its bodies are small and per request (docs/decisions.md "Compression").
 */
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * gzip is used only when it saves at least this share of the bytes: the float weights save 7-8 %
 * (120 KB of FaceMesh's 1.4 MB), worth it at no CPU cost per request; random-looking data does not.
 */
export const MIN_SAVING = 0.05;
/** Entries kept (the capture files and the bundle: about 15); the oldest goes first. */
const MAX_ENTRIES = 64;

const cache = new Map<string, Buffer | null>();

/** The gzip body of `data` (identified by `hash`), or null when gzip does not pay. */
export function gzipOf(hash: string, data: Buffer): Buffer | null {
  let z = cache.get(hash);
  if (z === undefined) {
    const packed = gzipSync(data, { level: 9 });
    z = packed.length <= data.length * (1 - MIN_SAVING) ? packed : null;
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(hash, z);
  }
  return z;
}

/** Whether the request accepts gzip (`Accept-Encoding`, a `q=0` refuses it). */
export function acceptsGzip(req: FastifyRequest): boolean {
  const ae = req.headers['accept-encoding'];
  if (typeof ae !== 'string') return false;
  for (const part of ae.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name !== 'gzip' && name !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/** Whether `If-None-Match` names `etag` or its gzip variant. */
function notModified(req: FastifyRequest, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  if (typeof inm !== 'string') return false;
  const gz = gzipEtag(etag);
  return inm.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === etag || tag === gz;
  });
}

/** The gzip representation's strong ETag (a strong ETag names one byte sequence). */
export function gzipEtag(etag: string): string {
  return etag.replace(/"$/, '-gz"');
}

/**
 * Sends a static entity: 304 when `If-None-Match` names it (either encoding), else `data` gzipped
 * when the client accepts it and it pays, with `Vary: Accept-Encoding` and the representation's
 * ETag. `etag` is the quoted strong ETag of the content (its hash).
 */
export function sendEntity(
  req: FastifyRequest,
  reply: FastifyReply,
  entity: { etag: string; data: Buffer; contentType: string },
): FastifyReply {
  void reply.header('Vary', 'Accept-Encoding');
  const z = acceptsGzip(req) ? gzipOf(entity.etag, entity.data) : null;
  void reply.header('ETag', z ? gzipEtag(entity.etag) : entity.etag);
  if (notModified(req, entity.etag)) return reply.code(304).send();
  void reply.type(entity.contentType);
  if (!z) return reply.send(entity.data);
  return reply.header('Content-Encoding', 'gzip').send(z);
}
