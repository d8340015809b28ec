/**
 * Presigned upload URLs (spec: PUT {uploadUrl} — "the URL is the credential"). The URL names the
 * object and carries its kind, content type and expiry, with an HMAC-SHA256 over all of them keyed
 * by the server secret:
 *
 *   {publicUrl}/sdk/v1/cloud/uploads/{objectKey}?kind=K&ct=CT&exp=EPOCH_MS&sig=BASE64URL
 *   sig = HMAC-SHA256(serverSecret, "vup1\n" + objectKey + "\n" + kind + "\n" + ct + "\n" + exp)
 *
 * Changing any part breaks the signature; the URL stops working at `exp` (15 minutes).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface UploadGrant {
  objectKey: string;
  kind: string;
  contentType: string;
  expiresAt: number;
}

const mac = (secret: string, g: UploadGrant): Buffer =>
  createHmac('sha256', secret)
    .update(['vup1', g.objectKey, g.kind, g.contentType, String(g.expiresAt)].join('\n'))
    .digest();

export const UPLOAD_PATH_PREFIX = '/sdk/v1/cloud/uploads/';

export function signUploadUrl(baseUrl: string, secret: string, g: UploadGrant): string {
  const q = new URLSearchParams({
    kind: g.kind,
    ct: g.contentType,
    exp: String(g.expiresAt),
    sig: mac(secret, g).toString('base64url'),
  });
  return `${baseUrl}${UPLOAD_PATH_PREFIX}${g.objectKey}?${q.toString()}`;
}

export type GrantCheck = { ok: true; grant: UploadGrant } | { ok: false; reason: 'invalid' | 'expired' };

export function verifyUploadUrl(
  secret: string,
  objectKey: string,
  query: Record<string, unknown>,
  nowMs: number,
): GrantCheck {
  const { kind, ct, exp, sig } = query;
  if (typeof kind !== 'string' || typeof ct !== 'string' || typeof exp !== 'string' || typeof sig !== 'string')
    return { ok: false, reason: 'invalid' };
  const expiresAt = Number(exp);
  if (!Number.isSafeInteger(expiresAt)) return { ok: false, reason: 'invalid' };
  const grant = { objectKey, kind, contentType: ct, expiresAt };
  const expected = mac(secret, grant);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
  if (nowMs > expiresAt) return { ok: false, reason: 'expired' };
  return { ok: true, grant };
}
