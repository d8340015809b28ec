/**
 * Session tokens (spec: Session — claims `sid`, `dur`, features; format not shown, designed in
 * docs/decisions.md). Compact, signed by the server secret with HMAC-SHA256:
 *
 *   vst1.<base64url(JSON claims)>.<base64url(HMAC-SHA256(serverSecret, "vst1." + payload))>
 *
 * Claims: `sid` session id, `kid` key id, `dur` max duration in seconds, `feat` requested features
 * (already intersected with the key's allowed features), `iat`/`exp` Unix seconds. The token
 * authorizes only its own session: the WebSocket `hello` and the session fallback endpoints.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SessionClaims {
  sid: string;
  kid: string;
  dur: number;
  feat: string[];
  iat: number;
  exp: number;
}

const PREFIX = 'vst1';
const MAX_TOKEN_LENGTH = 2048;

const b64u = (b: Buffer): string => b.toString('base64url');

function mac(secret: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(`${PREFIX}.${payload}`).digest();
}

export function signSessionToken(secret: string, claims: SessionClaims): string {
  const payload = b64u(Buffer.from(JSON.stringify(claims), 'utf8'));
  return `${PREFIX}.${payload}.${b64u(mac(secret, payload))}`;
}

/**
 * How long past `exp` + the session's duration the fallback endpoints still accept a token
 * (batch/fallback.ts); the sweep of never-connected sessions waits for it too (batch/unused-sessions.ts).
 */
export const FALLBACK_GRACE_EXTRA_SEC = 600;

export type TokenCheck =
  { ok: true; claims: SessionClaims } | { ok: false; code: 'token_invalid' | 'token_expired'; claims?: SessionClaims };

/**
 * Verifies signature first (constant-time), then expiry. `graceSec` extends the expiry (the
 * fallback endpoints accept a token for a while after its TTL; docs/decisions.md).
 */
export function verifySessionToken(secret: string, token: unknown, nowMs: number, graceSec = 0): TokenCheck {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) return { ok: false, code: 'token_invalid' };
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) return { ok: false, code: 'token_invalid' };
  const [, payload, sig] = parts;
  const expected = mac(secret, payload);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, code: 'token_invalid' };
  let claims: SessionClaims;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SessionClaims;
  } catch {
    return { ok: false, code: 'token_invalid' };
  }
  if (
    typeof claims?.sid !== 'string' ||
    typeof claims.kid !== 'string' ||
    typeof claims.dur !== 'number' ||
    !Array.isArray(claims.feat) ||
    typeof claims.exp !== 'number'
  )
    return { ok: false, code: 'token_invalid' };
  if (nowMs / 1000 > claims.exp + graceSec) return { ok: false, code: 'token_expired', claims };
  return { ok: true, claims };
}
