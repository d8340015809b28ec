/**
 * The browser capture's built files (packages/capture/dist/browser; `config.captureDir`), served by
 * the service (CONTRACT-BROWSER "Static files of the page"):
 * - `GET /capture/<file>`: always (customers' pages may load the capture code from the service), to
 *   any origin (CORS from app.ts), revalidated (`no-cache` + a strong ETag: the names are not
 *   content-addressed), gzipped when the client accepts it (gzip-cache.ts);
 * - `GET /`: the demo page (`demo.html`), only when the demo serves this request (demo/guard.ts),
 *   with a Content-Security-Policy that allows this origin only, and the camera for this origin.
 *
 * Only plain file names with a known extension are served, each path segment of
 * `[A-Za-z0-9_-][A-Za-z0-9._-]*` (so no `..`, no hidden files), and the resolved real path must
 * stay inside the directory (a symbolic link out of it is refused).
 */
import { createHash } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { sendEntity } from '../gzip-cache.js';
import { demoServes } from './guard.js';

export const CAPTURE_PREFIX = '/capture/';
export const DEMO_PAGE = 'demo.html';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** Capture files are a few MB at most; anything larger is not one of them. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/**
 * The demo page's policy: scripts, workers, connections and media from this origin only; WASM
 * compilation (`wasm-unsafe-eval`) and `blob:` for the tfjs runtime and the worker; no framing.
 * `advertised` is the origin the service advertises in `manifestUrl` and `wsUrl` (VITALS_PUBLIC_URL
 * or the listener): a page opened under another name for the same service (`localhost` for
 * `127.0.0.1`) must still reach it, over HTTP and WebSocket.
 */
export function demoCsp(advertised?: string): string {
  let extra = '';
  if (advertised) {
    try {
      const o = new URL(advertised).origin;
      extra = ` ${o} ${o.replace(/^http/, 'ws')}`;
    } catch {
      extra = '';
    }
  }
  return [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval' blob:",
    "worker-src 'self' blob:",
    `connect-src 'self' blob: data:${extra}`,
    "img-src 'self' data: blob:",
    "media-src 'self' blob: mediastream:",
    "style-src 'self' 'unsafe-inline'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The real path of `rel` inside `dir`, or undefined (bad name, missing, a link out, too large). */
async function resolveInside(dir: string, rel: string): Promise<string | undefined> {
  const segments = rel.split('/');
  if (segments.length > 4 || !segments.every((s) => SEGMENT.test(s))) return undefined;
  if (!(path.extname(rel) in TYPES)) return undefined;
  try {
    const root = await realpath(dir);
    const file = await realpath(path.join(root, ...segments));
    if (!file.startsWith(root + path.sep)) return undefined;
    const st = await stat(file);
    return st.isFile() && st.size <= MAX_FILE_BYTES ? file : undefined;
  } catch {
    return undefined;
  }
}

async function sendStatic(
  req: FastifyRequest,
  reply: FastifyReply,
  file: string,
  headers: Record<string, string>,
): Promise<FastifyReply> {
  const data = await readFile(file);
  const etag = `"${createHash('sha256').update(data).digest('base64url').slice(0, 27)}"`;
  void reply.headers({ 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff', ...headers });
  // gzip once per content (gzip-cache.ts): the capture code is text, about 4x smaller.
  return sendEntity(req, reply, { etag, data, contentType: TYPES[path.extname(file)] });
}

export async function staticRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const dir = ctx.config.captureDir;
  const hide = { hide: true };

  app.get<{ Params: { '*': string } }>(`${CAPTURE_PREFIX}*`, { schema: hide }, async (req, reply) => {
    const file = await resolveInside(dir, req.params['*']);
    if (!file) throw notFound('file');
    return sendStatic(req, reply, file, { 'Cross-Origin-Resource-Policy': 'cross-origin' });
  });

  if (ctx.config.demo === 'off') return;
  app.get('/', { schema: hide }, async (req, reply) => {
    if (!demoServes(ctx.config.demo, req)) throw new ApiError('not_found', 'no such route');
    const file = await resolveInside(dir, DEMO_PAGE);
    if (!file)
      throw new ApiError(
        'not_found',
        `the demo page is not built (${DEMO_PAGE} in the capture package): run npm install`,
      );
    return sendStatic(req, reply, file, {
      'Content-Security-Policy': demoCsp(ctx.publicUrl),
      'Permissions-Policy': 'camera=(self), microphone=()',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
    });
  });
}
