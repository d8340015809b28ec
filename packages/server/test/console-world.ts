/**
 * The console's test world (issue 16): a `World` (helpers.ts) with a console account of the world
 * key's organization, and calls made as the console page makes them (same-origin JSON with the
 * session cookie). A second organization with its own account, key and data is one call away.
 */
import { test as base } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createWorld, json, type World } from './helpers.js';
import { createAccount } from '../src/console/accounts.js';
import { createOrg } from '../src/store/orgs-keys.js';
import type { TestKey } from '../src/testing.js';

export const ORIGIN = 'http://localhost';
export const PASSWORD = 'correct horse battery staple';
export const FAST = { log2N: 10, r: 8, p: 1 };

export interface ConsoleCall {
  method?: string;
  url: string;
  body?: unknown;
  /** The session cookie value; null sends none. Defaults to the world's signed-in session. */
  cookie?: string | null;
  /** Replaces or (undefined) removes headers. */
  headers?: Record<string, string | undefined>;
}

export interface ConsoleWorld extends World {
  email: string;
  accountId: string;
  orgId: string;
  cookie: string;
  /** A request as the console page sends it. */
  api(opts: ConsoleCall): Promise<LightMyRequestResponse>;
  /** Signs in and returns the cookie value (the raw response too). */
  signIn(email: string, password: string): Promise<{ res: LightMyRequestResponse; cookie: string | undefined }>;
  /** Another organization with a key and a signed-in account. */
  otherOrg(): Promise<{ key: TestKey; orgId: string; cookie: string }>;
}

export function cookieOf(res: LightMyRequestResponse): string | undefined {
  const set = res.headers['set-cookie'];
  const line = Array.isArray(set) ? set[0] : set;
  const m = /^vitals_console=([^;]*)/.exec(line ?? '');
  return m ? m[1] : undefined;
}

let n = 0;

export async function createConsoleWorld(
  opts: { env?: Record<string, string>; now?: number } = {},
): Promise<ConsoleWorld> {
  const w = await createWorld({
    ...(opts.now === undefined ? {} : { now: opts.now }),
    env: { VITALS_EMBEDDED_WORKER: '0', VITALS_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', ...opts.env },
  });
  const db = w.t.ctx.db.db;
  const api = async (o: ConsoleCall, cookie: string | null): Promise<LightMyRequestResponse> => {
    const method = (o.method ?? 'GET').toUpperCase();
    const headers: Record<string, string> = {};
    if (method !== 'GET' && method !== 'HEAD') headers.origin = ORIGIN;
    if (cookie) headers.cookie = `vitals_console=${cookie}`;
    let payload: string | undefined;
    if (o.body !== undefined) {
      payload = JSON.stringify(o.body);
      headers['content-type'] = 'application/json';
    }
    for (const [k, v] of Object.entries(o.headers ?? {})) {
      if (v === undefined) delete headers[k.toLowerCase()];
      else headers[k.toLowerCase()] = v;
    }
    return w.app.inject({ method: method as 'GET', url: o.url, headers, payload });
  };
  const signIn = async (email: string, password: string) => {
    const res = await api({ method: 'POST', url: '/api/v1/auth/login', body: { email, password } }, null);
    return { res, cookie: cookieOf(res) };
  };
  const newAccount = async (orgId: string) => {
    const email = `person${++n}@example.com`;
    // The lowest cost verifyPassword accepts: the tests sign in many times; the production cost
    // is asserted in console-auth.test.ts.
    const { accountId } = await createAccount(db, { email, org: orgId, password: PASSWORD }, w.clock.now(), FAST);
    const { cookie, res } = await signIn(email, PASSWORD);
    if (!cookie) throw new Error(`sign-in failed: ${res.body}`);
    return { email, accountId, cookie };
  };
  const mine = await newAccount(w.key.orgId);
  const cw: ConsoleWorld = {
    ...w,
    ...mine,
    orgId: w.key.orgId,
    api: (o) => api(o, o.cookie === undefined ? cw.cookie : o.cookie),
    signIn,
    async otherOrg() {
      const org = await createOrg(db, 'other', 100, w.clock.now());
      const key = await w.newKey({ orgId: org.id });
      const { cookie } = await newAccount(org.id);
      return { key, orgId: org.id, cookie };
    },
  };
  return cw;
}

export { json };

/** `test` with a fresh console world per test: `test('...', async ({ cw }) => ...)`. */
export const test = base.extend<{ cw: ConsoleWorld }>({
  // eslint-disable-next-line no-empty-pattern
  cw: async ({}, use) => {
    const w = await createConsoleWorld();
    await use(w);
    await w.close();
  },
});
