/**
 * How the items of a PostgreSQL group-commit batch (pg-batch.ts) are grouped into statements while
 * each caller keeps its own outcome: a group the database refuses for its data is retried one item
 * at a time, and a nonce used twice in one batch is spent once.
 */
import pg from 'pg';
import type { Outcome } from './batcher.js';
import type { NonceSpend } from './nonces.js';

/**
 * A statement the server rolled back because of the data it carried (SQLSTATE class 22, data
 * exception, or 23, integrity constraint): one item may be at fault, so the group's items are
 * retried one statement each. Any other failure (connection lost, timeout, read-only after a
 * failover, disk full) is not about an item: it fails the group as it is, without 64 retries
 * against a database that is already failing.
 */
export const itemMayBeAtFault = (err: unknown): boolean =>
  err instanceof pg.DatabaseError && /^2[23]/.test(err.code ?? '');

export const nonceKey = (s: NonceSpend): string => `${s.keyId}\u0000${s.nonce}`;
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** Batches sharing nonces (a replay racing its original in another process) take the index's locks in one order. */
const byNonce = (a: NonceSpend, b: NonceSpend): number =>
  a.keyId === b.keyId ? cmp(a.nonce, b.nonce) : cmp(a.keyId, b.keyId);
export const nonceRow = (s: NonceSpend) => ({ key_id: s.keyId, nonce: s.nonce, expires_at: s.now + s.ttlMs });

/**
 * Runs `write` over the items of a batch with distinct nonces, grouped by `groupKey` and sorted by
 * nonce; `write` says which of its items spent their nonce now. A nonce twice in one batch: only
 * its first use can be fresh, the later ones are replays of it. A group whose statement the database
 * refuses for its data is retried one item at a time, so only the item at fault gets the error; any
 * other failure fails that group alone.
 */
export async function spendDistinct(
  spends: NonceSpend[],
  groupKey: (i: number) => unknown,
  write: (group: number[]) => Promise<boolean[]>,
): Promise<Array<Outcome<boolean>>> {
  const outcomes: Array<Outcome<boolean>> = spends.map(() => ({ ok: true, value: false }));
  const firstUse = new Map<string, number>();
  const distinct: number[] = [];
  const repeats: Array<[number, number]> = [];
  spends.forEach((s, i) => {
    const k = nonceKey(s);
    const first = firstUse.get(k);
    if (first === undefined) {
      firstUse.set(k, i);
      distinct.push(i);
    } else repeats.push([i, first]);
  });
  await Promise.all(
    groupBy(distinct, groupKey).map(async (group) => {
      group.sort((a, b) => byNonce(spends[a], spends[b]));
      try {
        const fresh = await write(group);
        group.forEach((i, k) => (outcomes[i] = { ok: true, value: fresh[k] }));
      } catch (err) {
        // Each group answers for itself: another group of the batch may still be committing, and
        // its callers must not hear an error for rows that are stored.
        if (group.length === 1 || !itemMayBeAtFault(err)) {
          for (const i of group) outcomes[i] = { ok: false, error: err };
          return;
        }
        await Promise.all(
          group.map(async (i) => {
            const alone = await settle(write([i]));
            outcomes[i] = alone.ok ? { ok: true, value: alone.value[0] } : alone;
          }),
        );
      }
    }),
  );
  // A repeat is a replay of its first use, unless that use failed: then nothing was spent, and
  // the repeat hears the same error rather than "reused".
  for (const [i, first] of repeats) if (!outcomes[first].ok) outcomes[i] = outcomes[first];
  return outcomes;
}

export function groupBy<T>(items: T[], key: (t: T) => unknown): T[][] {
  const groups = new Map<unknown, T[]>();
  for (const it of items) {
    const k = key(it);
    const g = groups.get(k);
    if (g) g.push(it);
    else groups.set(k, [it]);
  }
  return [...groups.values()];
}

export function settle<T>(p: Promise<T>): Promise<Outcome<T>> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}
