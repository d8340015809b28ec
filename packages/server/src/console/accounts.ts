/**
 * Console accounts (issue 16): one organization per account, created by the operator
 * (`vitals-server accounts create`). Emails are trimmed and lower-cased; one account per email.
 */
import type { Kysely } from 'kysely';
import { createOrg, getOrg } from '../store/orgs-keys.js';
import type { Database } from '../store/schema.js';
import { pooledHex } from '../ids.js';
import { hashPassword, PASSWORD_MAX, PASSWORD_MIN, SCRYPT, type ScryptParams } from './password.js';

export interface Account {
  id: string;
  orgId: string;
  email: string;
  passwordHash: string;
  status: 'active' | 'disabled';
  createdAt: number;
}

export class AccountError extends Error {}

export const EMAIL_MAX = 254;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

const toAccount = (r: Database['console_accounts']): Account => ({
  id: r.id,
  orgId: r.org_id,
  email: r.email,
  passwordHash: r.password_hash,
  status: r.status === 'active' ? 'active' : 'disabled',
  createdAt: Number(r.created_at),
});

export async function findAccountByEmail(db: Kysely<Database>, email: string): Promise<Account | undefined> {
  const e = normalizeEmail(email);
  if (e.length > EMAIL_MAX) return undefined;
  const r = await db.selectFrom('console_accounts').selectAll().where('email', '=', e).executeTakeFirst();
  return r && toAccount(r);
}

export async function getAccount(db: Kysely<Database>, id: string): Promise<Account | undefined> {
  const r = await db.selectFrom('console_accounts').selectAll().where('id', '=', id).executeTakeFirst();
  return r && toAccount(r);
}

/**
 * Creates an account. `org` is an existing organization id (`org_...`), or the name of a new
 * organization made for the account, unmetered as `orgs create` without a balance makes it.
 */
export async function createAccount(
  db: Kysely<Database>,
  input: { email: string; org: string; password: string },
  now: number,
  params: ScryptParams = SCRYPT,
): Promise<{ accountId: string; orgId: string }> {
  const email = normalizeEmail(input.email);
  if (email.length > EMAIL_MAX || !EMAIL.test(email)) throw new AccountError('email is not a valid address');
  if (input.password.length < PASSWORD_MIN || input.password.length > PASSWORD_MAX)
    throw new AccountError(`password must be ${PASSWORD_MIN}-${PASSWORD_MAX} characters`);
  const orgArg = input.org.trim();
  if (!orgArg) throw new AccountError('--org needs an organization id or a new organization name');
  if (await findAccountByEmail(db, email)) throw new AccountError(`an account with email ${email} exists`);
  if (orgArg.startsWith('org_') && !(await getOrg(db, orgArg))) throw new AccountError(`no organization ${orgArg}`);
  const passwordHash = await hashPassword(input.password, params);
  const orgId = orgArg.startsWith('org_') ? orgArg : (await createOrg(db, orgArg.slice(0, 200), null, now)).id;
  const id = `acc_${pooledHex(12)}`;
  await db
    .insertInto('console_accounts')
    .values({ id, org_id: orgId, email, password_hash: passwordHash, status: 'active', created_at: now })
    .execute();
  return { accountId: id, orgId };
}
