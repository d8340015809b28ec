/**
 * Console sessions (issue 16; docs/console.md, "Session"): an opaque random id in the cookie, its
 * SHA-256 in the store, an idle expiry (30 min after the last request) and an absolute one (12 h
 * after sign-in). Sign-in always mints a new id; sign-out deletes the row.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';

export const SESSION_COOKIE = 'vitals_console';
export const SESSION_IDLE_MS = 30 * 60_000;
export const SESSION_ABSOLUTE_MS = 12 * 3_600_000;
/** `last_seen_at` is written at most this often: one write a minute, not one per request. */
const TOUCH_EVERY_MS = 60_000;

export interface ConsoleSession {
  idSha256: string;
  accountId: string;
  orgId: string;
  /** When the session ends if nothing else happens: the earlier of the idle and absolute expiries. */
  expiresAt: number;
}

const digest = (id: string): string => createHash('sha256').update(id).digest('hex');

/** Starts a session; the returned id goes into the cookie and nowhere else. */
export async function startSession(
  db: Kysely<Database>,
  account: { id: string; orgId: string },
  now: number,
): Promise<{ id: string; session: ConsoleSession }> {
  const id = randomBytes(32).toString('base64url');
  const row = {
    id_sha256: digest(id),
    account_id: account.id,
    org_id: account.orgId,
    created_at: now,
    last_seen_at: now,
    expires_at: now + SESSION_ABSOLUTE_MS,
  };
  await db.insertInto('console_sessions').values(row).execute();
  // Sessions past their absolute end (anyone's; indexed) and this account's idle ones go now, so the
  // table holds live sessions and a few idle stragglers of accounts that have not signed in since.
  await db
    .deleteFrom('console_sessions')
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb.and([eb('account_id', '=', account.id), eb('last_seen_at', '<=', now - SESSION_IDLE_MS)]),
      ]),
    )
    .execute();
  return { id, session: toSession(row) };
}

const toSession = (r: Database['console_sessions']): ConsoleSession => ({
  idSha256: r.id_sha256,
  accountId: r.account_id,
  orgId: r.org_id,
  expiresAt: Math.min(Number(r.expires_at), Number(r.last_seen_at) + SESSION_IDLE_MS),
});

/**
 * The live session of a cookie value, its idle clock restarted; undefined when unknown, idle too
 * long or past its absolute end (such a row is deleted). The lookup is by hash: a timing difference
 * could only reveal a hash prefix, not an id.
 */
export async function resumeSession(
  db: Kysely<Database>,
  id: string,
  now: number,
): Promise<ConsoleSession | undefined> {
  if (id.length < 32 || id.length > 64) return undefined;
  const key = digest(id);
  const r = await db.selectFrom('console_sessions').selectAll().where('id_sha256', '=', key).executeTakeFirst();
  if (!r) return undefined;
  const lastSeen = Number(r.last_seen_at);
  if (now >= Number(r.expires_at) || now - lastSeen >= SESSION_IDLE_MS) {
    await db.deleteFrom('console_sessions').where('id_sha256', '=', key).execute();
    return undefined;
  }
  if (now - lastSeen >= TOUCH_EVERY_MS) {
    await db.updateTable('console_sessions').set({ last_seen_at: now }).where('id_sha256', '=', key).execute();
    return toSession({ ...r, last_seen_at: now });
  }
  return toSession(r);
}

export async function endSession(db: Kysely<Database>, id: string): Promise<void> {
  if (id.length > 64) return;
  await db.deleteFrom('console_sessions').where('id_sha256', '=', digest(id)).execute();
}
