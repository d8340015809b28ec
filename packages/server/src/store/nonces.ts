/**
 * Nonces are remembered in the database for the signature window so a replay fails across
 * processes (spec: Authentication 2). The primary key makes "spend" atomic.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { prepare } from './compiled.js';

/** A nonce to spend: recorded until `now + ttlMs`. */
export interface NonceSpend {
  keyId: string;
  nonce: string;
  now: number;
  ttlMs: number;
}

const insertNonce = prepare(['keyId', 'nonce', 'expiresAt'], (db, p) =>
  db
    .insertInto('nonces')
    .values({ key_id: p.keyId, nonce: p.nonce, expires_at: p.expiresAt })
    .onConflict((oc) => oc.columns(['key_id', 'nonce']).doNothing()),
);

/** Records a nonce; false when it was already spent (and not yet expired). */
export async function spendNonce(
  db: Kysely<Database>,
  keyId: string,
  nonce: string,
  now: number,
  ttlMs: number,
): Promise<boolean> {
  const res = await insertNonce.execute(db, { keyId, nonce, expiresAt: now + ttlMs });
  if (Number(res.numAffectedRows ?? 0) > 0) return true;
  return takeOverExpiredNonce(db, keyId, nonce, now, ttlMs);
}

/** The nonce's row exists: a replay (false) unless it has expired, in which case it is taken over (true). */
export async function takeOverExpiredNonce(
  db: Kysely<Database>,
  keyId: string,
  nonce: string,
  now: number,
  ttlMs: number,
): Promise<boolean> {
  const taken = await db
    .updateTable('nonces')
    .set({ expires_at: now + ttlMs })
    .where('key_id', '=', keyId)
    .where('nonce', '=', nonce)
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) > 0;
}

export async function sweepNonces(db: Kysely<Database>, now: number): Promise<number> {
  const res = await db.deleteFrom('nonces').where('expires_at', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}
