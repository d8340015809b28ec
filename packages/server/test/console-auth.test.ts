/**
 * Console accounts and sessions (issue 16, "Accounts and the console session"; CONTRACT.md
 * "Console"): sign-in, uniform failures, rate limits, the cookie, idle and absolute expiry,
 * rotation, sign-out; runs on SQLite, and on PostgreSQL with VITALS_TEST_DATABASE_URL.
 */
import { createHash } from 'node:crypto';
import { describe, expect } from 'vitest';
import { createConsoleWorld, cookieOf, FAST, json, PASSWORD, test } from './console-world.js';
import { createAccount, AccountError } from '../src/console/accounts.js';
import { verifyPassword } from '../src/console/password.js';
import { LOGIN_FAILURES_PER_ACCOUNT, LOGIN_PER_ADDRESS } from '../src/console/auth-routes.js';

const MIN = 60_000;

describe('sign-in', () => {
  test('sets an HttpOnly, SameSite=Strict cookie for /api/v1 only; the store keeps its hash', async ({ cw }) => {
    const { res, cookie } = await cw.signIn(cw.email, PASSWORD);
    expect(res.statusCode).toBe(200);
    expect(json(res).data).toMatchObject({ accountId: cw.accountId, email: cw.email, orgId: cw.orgId });
    const line = String(res.headers['set-cookie']);
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Strict/);
    expect(line).toMatch(/Path=\/api\/v1/);
    expect(line).not.toMatch(/Secure/);
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await cw.t.ctx.db.db.selectFrom('console_sessions').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(cookie!);
    expect(rows.map((r) => r.id_sha256)).toContain(createHash('sha256').update(cookie!).digest('hex'));
    const me = await cw.api({ url: '/api/v1/me', cookie });
    expect(me.statusCode).toBe(200);
    expect(json(me).data).toMatchObject({ accountId: cw.accountId, email: cw.email, orgId: cw.orgId, balanceUsd: 100 });
  });

  test('the cookie is Secure when the console is served over https', async () => {
    const w = await createConsoleWorld({ env: { VITALS_PUBLIC_URL: 'https://console.example.com' } });
    try {
      const { res } = await w.signIn(w.email, PASSWORD);
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
    } finally {
      await w.close();
    }
  });

  test('a wrong password and an unknown email get the same 401 and no cookie', async ({ cw }) => {
    const cases = [
      { email: cw.email, password: 'not the password' },
      { email: 'nobody@example.com', password: PASSWORD },
      { email: cw.email.toUpperCase(), password: 'not the password' },
    ];
    const answers = [];
    for (const body of cases) {
      const res = await cw.api({ method: 'POST', url: '/api/v1/auth/login', body, cookie: null });
      expect(res.statusCode).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
      answers.push(json(res).error);
    }
    expect(answers[0]).toEqual({ code: 'unauthorized', message: 'wrong email or password' });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    // The email is case-insensitive: the right password under another case signs in.
    expect((await cw.signIn(cw.email.toUpperCase(), PASSWORD)).res.statusCode).toBe(200);
  });

  test.each([
    ['no body', undefined],
    ['no password', { email: 'a@example.com' }],
    ['extra field', { email: 'a@example.com', password: 'x', admin: true }],
    ['password too long', { email: 'a@example.com', password: 'x'.repeat(1025) }],
  ])('a malformed sign-in (%s) is 400 validation_error', async (_name, body) => {
    const w = await createConsoleWorld();
    try {
      const res = await w.api({ method: 'POST', url: '/api/v1/auth/login', body, cookie: null });
      expect(res.statusCode).toBe(400);
      expect(json(res).error.code).toBe('validation_error');
    } finally {
      await w.close();
    }
  });

  test('failures are limited per account: then 429 even with the right password, until the window ends', async ({
    cw,
  }) => {
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT; i++)
      expect((await cw.signIn(cw.email, `wrong ${i}`)).res.statusCode).toBe(401);
    const refused = (await cw.signIn(cw.email, PASSWORD)).res;
    expect(refused.statusCode).toBe(429);
    expect(json(refused).error.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another account from the same address is not affected.
    const other = await cw.otherOrg();
    expect(other.cookie).toBeTruthy();
    cw.clock.advance(15 * MIN);
    expect((await cw.signIn(cw.email, PASSWORD)).res.statusCode).toBe(200);
  });

  test('a successful sign-in does not count against the account', async ({ cw }) => {
    for (let i = 0; i < LOGIN_FAILURES_PER_ACCOUNT + 2; i++)
      expect((await cw.signIn(cw.email, PASSWORD)).res.statusCode).toBe(200);
  });

  test('attempts are limited per address, whatever the account', async ({ cw }) => {
    const from = (remoteAddress: string, email: string) =>
      cw.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        remoteAddress,
        headers: { origin: 'http://localhost', 'content-type': 'application/json' },
        payload: JSON.stringify({ email, password: 'guess' }),
      });
    // Spread over accounts so that no account reaches its own limit first.
    const perAccount = LOGIN_FAILURES_PER_ACCOUNT;
    const emails = [];
    for (let i = 0; i < Math.ceil(LOGIN_PER_ADDRESS / perAccount); i++) {
      emails.push(`spread${i}@example.com`);
      await createAccount(
        cw.t.ctx.db.db,
        { email: emails[i], org: cw.orgId, password: PASSWORD },
        cw.clock.now(),
        FAST,
      );
    }
    for (let i = 0; i < LOGIN_PER_ADDRESS; i++)
      expect((await from('203.0.113.7', emails[Math.floor(i / perAccount)])).statusCode).toBe(401);
    const res = await from('203.0.113.7', cw.email);
    expect(res.statusCode).toBe(429);
    expect(json(res).error.code).toBe('rate_limited');
    expect((await from('203.0.113.8', cw.email)).statusCode).toBe(401);
  });
});

describe('the session', () => {
  test('sign-out answers 204, clears the cookie and ends the session in the store', async ({ cw }) => {
    const res = await cw.api({ method: 'POST', url: '/api/v1/auth/logout' });
    expect(res.statusCode).toBe(204);
    expect(String(res.headers['set-cookie'])).toMatch(/^vitals_console=; .*Max-Age=0/);
    expect((await cw.api({ url: '/api/v1/me' })).statusCode).toBe(401);
    expect(await cw.t.ctx.db.db.selectFrom('console_sessions').selectAll().execute()).toHaveLength(0);
    // Signing out again (no session) is still 204.
    expect((await cw.api({ method: 'POST', url: '/api/v1/auth/logout' })).statusCode).toBe(204);
  });

  test('sign-in rotates the session: the cookie it came with stops working', async ({ cw }) => {
    const res = await cw.api({
      method: 'POST',
      url: '/api/v1/auth/login',
      body: { email: cw.email, password: PASSWORD },
    });
    const fresh = cookieOf(res);
    expect(fresh).toBeTruthy();
    expect(fresh).not.toBe(cw.cookie);
    expect((await cw.api({ url: '/api/v1/me' })).statusCode).toBe(401);
    expect((await cw.api({ url: '/api/v1/me', cookie: fresh })).statusCode).toBe(200);
  });

  test('ends 30 minutes after the last request (idle)', async ({ cw }) => {
    cw.clock.advance(29 * MIN);
    expect((await cw.api({ url: '/api/v1/me' })).statusCode).toBe(200);
    cw.clock.advance(29 * MIN);
    expect((await cw.api({ url: '/api/v1/me' })).statusCode).toBe(200);
    cw.clock.advance(30 * MIN);
    const res = await cw.api({ url: '/api/v1/me' });
    expect(res.statusCode).toBe(401);
    expect(json(res).error.code).toBe('unauthorized');
  });

  test('ends 12 hours after sign-in even while in use (absolute)', async ({ cw }) => {
    for (let elapsed = 0; elapsed + 20 * MIN < 12 * 60 * MIN; elapsed += 20 * MIN) {
      cw.clock.advance(20 * MIN);
      expect((await cw.api({ url: '/api/v1/me' })).statusCode).toBe(200);
    }
    cw.clock.advance(20 * MIN);
    expect((await cw.api({ url: '/api/v1/me' })).statusCode).toBe(401);
  });

  test.each([
    ['no cookie', null],
    ['a made-up id', 'A'.repeat(43)],
    ['an over-long id', 'A'.repeat(300)],
  ])('GET /api/v1/me with %s is 401', async (_name, cookie) => {
    const w = await createConsoleWorld();
    try {
      const res = await w.api({ url: '/api/v1/me', cookie });
      expect(res.statusCode).toBe(401);
      expect(json(res).error.code).toBe('unauthorized');
    } finally {
      await w.close();
    }
  });
});

describe('accounts', () => {
  test('the password is stored as scrypt with its parameters, never in clear', async ({ cw }) => {
    const made = await createAccount(
      cw.t.ctx.db.db,
      { email: 'stored@example.com', org: cw.orgId, password: PASSWORD },
      cw.clock.now(),
    );
    const row = await cw.t.ctx.db.db
      .selectFrom('console_accounts')
      .selectAll()
      .where('id', '=', made.accountId)
      .executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(row.password_hash).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, row.password_hash)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, row.password_hash)).toBe(false);
    expect(await verifyPassword(PASSWORD, 'not a hash')).toBe(false);
  });

  test('creation refuses a taken email, a short password, a bad email and an unknown org id', async ({ cw }) => {
    const db = cw.t.ctx.db.db;
    const now = cw.clock.now();
    const cases: Array<[string, { email: string; org: string; password: string }, RegExp]> = [
      ['taken email', { email: cw.email.toUpperCase(), org: cw.orgId, password: PASSWORD }, /exists/],
      ['short password', { email: 'new@example.com', org: cw.orgId, password: 'short' }, /10-1024/],
      ['bad email', { email: 'no-at-sign', org: cw.orgId, password: PASSWORD }, /email/],
      [
        'unknown org',
        { email: 'new@example.com', org: 'org_000000000000000000000000', password: PASSWORD },
        /no organization/,
      ],
    ];
    for (const [name, input, message] of cases) {
      await expect(createAccount(db, input, now), name).rejects.toThrow(AccountError);
      await expect(createAccount(db, input, now), name).rejects.toThrow(message);
    }
  });

  test('an --org that is not an id makes a new, unmetered organization with the account', async ({ cw }) => {
    const made = await createAccount(
      cw.t.ctx.db.db,
      { email: 'founder@example.com', org: 'Acme Health', password: PASSWORD },
      cw.clock.now(),
    );
    expect(made.orgId).toMatch(/^org_/);
    expect(made.orgId).not.toBe(cw.orgId);
    const { res } = await cw.signIn('founder@example.com', PASSWORD);
    expect(json(res).data).toMatchObject({ orgId: made.orgId, orgName: 'Acme Health', balanceUsd: null });
  });
});
