/**
 * Sign-in, sign-out and `GET /api/v1/me` (CONTRACT.md "Console"; issue 16). Every failed sign-in
 * answers the same 401 after the same work (an unknown email verifies against a decoy hash);
 * attempts are limited per address and failures per account (docs/console.md).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConsoleLogin, ConsoleMe, ErrorEnvelope, envelopeOf } from '@vitals/protocol';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { RateLimiter } from '../auth/rate-limiter.js';
import { requestAddress } from '../store/auth-rejections.js';
import { getOrg } from '../store/orgs-keys.js';
import { findAccountByEmail, getAccount, normalizeEmail } from './accounts.js';
import { decoyHash, verifyPassword } from './password.js';
import { endSession, startSession, SESSION_COOKIE, type ConsoleSession } from './sessions.js';
import { clearedCookie, readCookie, sessionCookie, sessionOf } from './guard.js';
import { balanceUsdOf } from './views.js';

export const LOGIN_WINDOW_MS = 15 * 60_000;
/** Sign-in attempts per client address per window, whatever their outcome. */
export const LOGIN_PER_ADDRESS = 30;
/** Failed sign-ins per account (email) per window. */
export const LOGIN_FAILURES_PER_ACCOUNT = 10;

const TAG = { tags: ['console'] };

async function meOf(ctx: AppContext, session: ConsoleSession) {
  const account = await getAccount(ctx.db.db, session.accountId);
  const org = await getOrg(ctx.db.db, session.orgId);
  if (!account || !org || account.status !== 'active') throw new ApiError('unauthorized', 'sign in first');
  return {
    accountId: account.id,
    email: account.email,
    orgId: org.id,
    orgName: org.name,
    balanceUsd: balanceUsdOf(org),
    sessionExpiresAt: session.expiresAt,
  };
}

function limited(resetSec: number): ApiError {
  return new ApiError('rate_limited', 'too many sign-in attempts; try again later', {
    'Retry-After': String(resetSec),
  });
}

export async function consoleAuthRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // Made now, not at the first unknown email: that first failure would otherwise take two hashes.
  void decoyHash();
  const perAddress = new RateLimiter(LOGIN_WINDOW_MS);
  const perAccount = new RateLimiter(LOGIN_WINDOW_MS);

  app.post<{ Body: ConsoleLogin }>(
    '/api/v1/auth/login',
    {
      config: { consolePublic: true },
      schema: {
        ...TAG,
        summary: 'Sign in to the console (sets the session cookie)',
        body: ConsoleLogin,
        response: { 200: envelopeOf(ConsoleMe), '4xx': ErrorEnvelope },
      },
    },
    async (req, reply) => {
      const now = ctx.clock.now();
      const byAddress = perAddress.hit(requestAddress(req), LOGIN_PER_ADDRESS, now);
      if (!byAddress.allowed) throw limited(byAddress.resetSec);
      const email = normalizeEmail(req.body.email);
      const byAccount = perAccount.hit(email, LOGIN_FAILURES_PER_ACCOUNT, now);
      if (!byAccount.allowed) throw limited(byAccount.resetSec);
      const account = await findAccountByEmail(ctx.db.db, email);
      const matches = await verifyPassword(req.body.password, account?.passwordHash ?? (await decoyHash()));
      if (!account || !matches || account.status !== 'active')
        throw new ApiError('unauthorized', 'wrong email or password');
      perAccount.refund(email, now);
      // Sign-in rotates the session: whatever cookie came with the request stops working.
      await endPresented(req, ctx);
      const { id, session } = await startSession(ctx.db.db, account, ctx.clock.now());
      reply.header('Set-Cookie', sessionCookie(req, ctx, id));
      return { ok: true, data: await meOf(ctx, session) };
    },
  );

  app.post(
    '/api/v1/auth/logout',
    {
      config: { consolePublic: true },
      schema: { ...TAG, summary: 'Sign out (ends the session, clears the cookie)', response: { '4xx': ErrorEnvelope } },
    },
    async (req, reply) => {
      await endPresented(req, ctx);
      return reply.code(204).header('Set-Cookie', clearedCookie(req, ctx)).send();
    },
  );

  app.get(
    '/api/v1/me',
    {
      schema: {
        ...TAG,
        summary: 'The signed-in account and its organization',
        response: { 200: envelopeOf(ConsoleMe), '4xx': ErrorEnvelope },
      },
    },
    async (req) => ({ ok: true, data: await meOf(ctx, sessionOf(req)) }),
  );
}

async function endPresented(req: FastifyRequest, ctx: AppContext): Promise<void> {
  const id = readCookie(req, SESSION_COOKIE);
  if (id) await endSession(ctx.db.db, id);
}
