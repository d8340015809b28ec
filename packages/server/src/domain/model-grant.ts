/**
 * Model grants (spec: POST /sdk/v1/models/grant; "Format and signing ... of the model grant: not
 * shown", designed in docs/decisions.md, "Model grants"). A compact token signed by the server:
 *
 *   vmg1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(K, "vmg1." + payload))>
 *
 * K = HMAC-SHA256(serverSecret, "vitals model grant v1"): a key of its own, derived from the server
 * secret, so a grant can never verify as a session token (signed with the secret itself under
 * "vst1.") nor a session token as a grant, whatever the payloads hold.
 *
 * Claims: `kid` key id, `org` organization id, `mv` the modelsVersion it unlocks, `ori` the origin
 * it is bound to (absent: any), `iat`/`exp` Unix seconds.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface GrantClaims {
  kid: string;
  org: string;
  mv: string;
  ori?: string;
  iat: number;
  exp: number;
}

const PREFIX = 'vmg1';
const MAX_GRANT_LENGTH = 1024;
const KEY_PURPOSE = 'vitals model grant v1';

const b64u = (b: Buffer): string => b.toString('base64url');

function mac(secret: string, payload: string): Buffer {
  const key = createHmac('sha256', secret).update(KEY_PURPOSE).digest();
  return createHmac('sha256', key).update(`${PREFIX}.${payload}`).digest();
}

export function signModelGrant(secret: string, claims: GrantClaims): string {
  const payload = b64u(Buffer.from(JSON.stringify(claims), 'utf8'));
  return `${PREFIX}.${payload}.${b64u(mac(secret, payload))}`;
}

export type GrantCheck = { ok: true; claims: GrantClaims } | { ok: false; reason: 'invalid' | 'expired' };

/** Signature first (constant time), then shape, then expiry; never throws. */
export function verifyModelGrant(secret: string, grant: unknown, nowMs: number): GrantCheck {
  if (typeof grant !== 'string' || grant.length > MAX_GRANT_LENGTH) return { ok: false, reason: 'invalid' };
  const parts = grant.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) return { ok: false, reason: 'invalid' };
  const [, payload, sig] = parts;
  const expected = mac(secret, payload);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
  let claims: GrantClaims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as GrantClaims;
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  if (
    typeof claims?.kid !== 'string' ||
    typeof claims.org !== 'string' ||
    typeof claims.mv !== 'string' ||
    (claims.ori !== undefined && typeof claims.ori !== 'string') ||
    typeof claims.exp !== 'number'
  )
    return { ok: false, reason: 'invalid' };
  if (nowMs / 1000 >= claims.exp) return { ok: false, reason: 'expired' };
  return { ok: true, claims };
}

/** The grant from `Authorization: Bearer <grant>` (case-insensitive scheme), or undefined. */
export function bearerGrant(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1] : undefined;
}
