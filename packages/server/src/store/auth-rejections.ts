/**
 * Refused signatures that no key owner can read, counted instead of logged one row each (issue 19;
 * docs/decisions.md, "Authentication, rate limits and usage log"). A row per client address, hour
 * and error code (and key, for a known key's refusals past the per-address throttle), so what an
 * unauthenticated client can make us store is bounded by addresses x hours x ten codes, and the
 * table is swept after REJECTION_RETENTION_MS.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export const REJECTION_BUCKET_MS = 3_600_000;
export const REJECTION_RETENTION_MS = 30 * 86_400_000;

export async function countRejection(
  db: Kysely<Database>,
  r: { address: string; keyId: string | null; code: string; now: number },
): Promise<void> {
  const bucket = Math.floor(r.now / REJECTION_BUCKET_MS) * REJECTION_BUCKET_MS;
  await db
    .insertInto('auth_rejections')
    .values({
      address: r.address,
      bucket_start: bucket,
      key_id: r.keyId ?? '',
      error_code: r.code,
      count: 1,
      last_at: r.now,
    })
    .onConflict((oc) =>
      oc.columns(['address', 'bucket_start', 'key_id', 'error_code']).doUpdateSet({
        count: sql`auth_rejections.count + 1`,
        last_at: r.now,
      }),
    )
    .execute();
}

/** Deletes buckets that started before `cutoffMs`; returns how many. */
export async function sweepRejections(db: Kysely<Database>, cutoffMs: number): Promise<number> {
  const res = await db.deleteFrom('auth_rejections').where('bucket_start', '<', cutoffMs).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * The one address every per-address rule keys on (refused signatures, console sign-in, model
 * downloads): `req.ip`, which is the X-Forwarded-For client only from a peer VITALS_TRUST_PROXY
 * trusts (trust-proxy.ts), folded by `clientAddress`.
 */
export const requestAddress = (req: { ip: string | undefined }): string => clientAddress(req.ip);

/**
 * The address a refusal is counted under: IPv4 as is (an IPv4-mapped IPv6 address as its IPv4), IPv6
 * by its /64, which one host usually holds whole, so rotating addresses inside it gains nothing.
 */
export function clientAddress(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!ip.includes(':')) return ip;
  const [head, tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (g || '0').replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
