/**
 * The console API's gate (issue 16; docs/console.md, "Session and cross-site protection"), run on
 * every `/api/v1` console route before anything else, in this order:
 * 1. NCS1 headers: 401. API keys never reach the console ("unreachable with an API key").
 * 2. A state-changing method not from the console's own origin: 403 `forbidden` (CSRF).
 * 3. The session cookie: resumed, or 401 (except on the routes marked `consolePublic`).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { AppContext } from '../context.js';
import { resumeSession, SESSION_ABSOLUTE_MS, SESSION_COOKIE, type ConsoleSession } from './sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session of a console route (guard.ts). */
    consoleSession?: ConsoleSession;
  }
  interface FastifyContextConfig {
    /** A console route that answers without a session (sign-in, sign-out). */
    consolePublic?: boolean;
  }
}

const NCS1_HEADERS = ['x-key-id', 'x-signature', 'x-nonce', 'x-timestamp'];
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The cookie is sent only to the console API, never to /sdk/v1 or the pages. */
export const COOKIE_PATH = '/api/v1';

/** The value of one cookie of the request, or undefined (first one wins, as browsers order them). */
export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (typeof header !== 'string' || header.length > 8192) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const isHttps = (req: FastifyRequest, ctx: AppContext): boolean =>
  req.protocol === 'https' || (ctx.config.publicUrl?.startsWith('https://') ?? false);

export function sessionCookie(req: FastifyRequest, ctx: AppContext, id: string): string {
  const secure = isHttps(req, ctx) ? '; Secure' : '';
  const maxAge = Math.floor(SESSION_ABSOLUTE_MS / 1000);
  return `${SESSION_COOKIE}=${id}; Path=${COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`;
}

export function clearedCookie(req: FastifyRequest, ctx: AppContext): string {
  const secure = isHttps(req, ctx) ? '; Secure' : '';
  return `${SESSION_COOKIE}=; Path=${COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Strict${secure}`;
}

/**
 * True when the request comes from a page of this server: its `Origin` is the address it was sent
 * to (`Host`, or a trusted proxy's `X-Forwarded-Host`) or VITALS_PUBLIC_URL; without `Origin`, `Sec-Fetch-Site: same-origin`. A browser sets
 * both on cross-site requests and a page cannot forge them.
 */
export function fromOwnOrigin(req: FastifyRequest, ctx: AppContext): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin') return false;
  const origin = req.headers.origin;
  if (typeof origin !== 'string') return site === 'same-origin';
  let u: URL;
  try {
    u = new URL(origin);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  if (ctx.config.publicUrl && u.origin === new URL(ctx.config.publicUrl).origin) return true;
  // The Host the request was sent to, read as the same scheme would (so `:80` and no port agree).
  // Fastify's `req.host` is X-Forwarded-Host only when the peer is a trusted proxy
  // (VITALS_TRUST_PROXY), so a proxy that rewrites Host still matches its public origin.
  const host = req.host;
  if (typeof host !== 'string' || host === '' || /[/?#@\\]/.test(host)) return false;
  try {
    return new URL(`${u.protocol}//${host}`).host === u.host;
  } catch {
    return false;
  }
}

export function consoleGuard(ctx: AppContext) {
  return async function guard(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    if (NCS1_HEADERS.some((h) => req.headers[h] !== undefined))
      throw new ApiError('unauthorized', 'the console API does not accept API keys; sign in at /console');
    if (!SAFE_METHODS.has(req.method) && !fromOwnOrigin(req, ctx))
      throw new ApiError('forbidden', 'cross-site request refused: state changes must come from the console itself');
    const id = readCookie(req, SESSION_COOKIE);
    const session = id ? await resumeSession(ctx.db.db, id, ctx.clock.now()) : undefined;
    if (session) req.consoleSession = session;
    else if (!req.routeOptions.config.consolePublic) throw new ApiError('unauthorized', 'sign in first');
  };
}

/** The session of a guarded route (always there: the guard answered 401 otherwise). */
export const sessionOf = (req: FastifyRequest): ConsoleSession => {
  if (!req.consoleSession) throw new ApiError('unauthorized', 'sign in first');
  return req.consoleSession;
};
