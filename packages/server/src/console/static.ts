/**
 * Serves the console's built pages at `/console` (issue 16; docs/console.md, "Serving") from the
 * directory resolved once in the config (`consoleDir`). A path naming a file serves it; a path
 * without an extension gets `index.html` (the app routes in the browser); a missing asset is a
 * plain 404. Nothing outside the directory can be named: `..`, `.` segments, backslashes, encoded
 * slashes and NUL are refused before the file system is asked.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../context.js';
import { notFound } from '../errors.js';

/** No inline script, nothing from another origin (issue 16: strict CSP, nothing from a CDN). */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

/** The file a request path names inside `root`, or undefined when the path is not acceptable. */
export function resolveInside(root: string, rawPath: string): string | undefined {
  if (rawPath.length > 512 || /%2f|%5c|%00/i.test(rawPath)) return undefined;
  let rel: string;
  try {
    rel = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  if (rel.includes('\0') || rel.includes('\\')) return undefined;
  const segments = rel.split('/').filter((s) => s !== '');
  if (segments.some((s) => s === '..' || s === '.' || s.startsWith('.'))) return undefined;
  const file = path.join(root, ...segments);
  return file === root || file.startsWith(root + path.sep) ? file : undefined;
}

async function readFileIfAny(file: string): Promise<Buffer | undefined> {
  try {
    const st = await fs.stat(file);
    return st.isFile() ? await fs.readFile(file) : undefined;
  } catch {
    return undefined;
  }
}

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', CONSOLE_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cross-Origin-Opener-Policy', 'same-origin');
}

export async function consolePages(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const root = path.resolve(ctx.config.consoleDir);

  async function sendIndex(reply: FastifyReply): Promise<FastifyReply> {
    const html = await readFileIfAny(path.join(root, 'index.html'));
    if (!html) throw notFound('console (not built: run npm install, which builds packages/console)');
    return pageHeaders(reply).header('Cache-Control', 'no-cache').type(TYPES['.html']).send(html);
  }

  const hide = { schema: { hide: true } };
  app.get('/console', hide, async (_req, reply) => sendIndex(reply));
  app.get<{ Params: { '*': string } }>('/console/*', hide, async (req, reply) => {
    // The raw URL, not the decoded parameter: an encoded slash or dot must not become a separator.
    const raw = (req.raw.url ?? '').split('?')[0].slice('/console/'.length);
    if (raw === '') return sendIndex(reply);
    const file = resolveInside(root, raw);
    if (!file) throw notFound('file');
    const body = await readFileIfAny(file);
    const ext = path.extname(file).toLowerCase();
    if (!body) {
      // An unknown path without an extension is a page of the app; a missing asset is a 404.
      if (ext === '') return sendIndex(reply);
      throw notFound('file');
    }
    // Vite names assets by their content hash: they never change, so they may be cached for good.
    const immutable = raw.startsWith('assets/');
    return pageHeaders(reply)
      .header('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .type(TYPES[ext] ?? 'application/octet-stream')
      .send(body);
  });
}
