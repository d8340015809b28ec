/**
 * NCS1 request signing (spec: Authentication, "Request signing"), over WebCrypto so the same code
 * runs in browsers, Node and workers.
 *
 * Canonical string: `NCS1\nMETHOD\npath\ntimestamp\nnonce\nsha256hex(body)`.
 * Signature: Base64(HMAC-SHA256(key = lowercase-hex SHA-256 of the secret, canonical string)).
 * Note the HMAC key is the 64 ASCII characters of the hex digest, not the 32 raw digest bytes.
 */
import { toBase64, toHex, utf8, timingSafeEqualString, randomHex } from './encoding.js';

export type BodyInput = string | Uint8Array;

function bytesOf(body: BodyInput | undefined): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  return typeof body === 'string' ? utf8(body) : body;
}

export async function sha256Hex(data: BodyInput): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', bytesOf(data) as BufferSource);
  return toHex(new Uint8Array(digest));
}

/** Strips the query string: the signature covers the path only. */
export function pathWithoutQuery(pathOrUrl: string): string {
  const q = pathOrUrl.indexOf('?');
  return q === -1 ? pathOrUrl : pathOrUrl.slice(0, q);
}

export async function canonicalString(parts: {
  method: string;
  path: string;
  timestamp: string;
  nonce: string;
  body?: BodyInput;
}): Promise<string> {
  return [
    'NCS1',
    parts.method.toUpperCase(),
    pathWithoutQuery(parts.path),
    parts.timestamp,
    parts.nonce,
    await sha256Hex(bytesOf(parts.body)),
  ].join('\n');
}

/** HMAC key material for a secret: the lowercase-hex SHA-256 of the secret, as ASCII bytes. */
export async function signingKeyOf(secret: string): Promise<string> {
  return sha256Hex(secret);
}

export async function hmacBase64(keyText: string, message: string): Promise<string> {
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    utf8(keyText) as BufferSource,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await globalThis.crypto.subtle.sign('HMAC', key, utf8(message) as BufferSource);
  return toBase64(new Uint8Array(mac));
}

/** Signs with a secret's hex digest (what the server stores) as the HMAC key. */
export async function signWithSecretHash(secretSha256Hex: string, canonical: string): Promise<string> {
  return hmacBase64(secretSha256Hex, canonical);
}

// A type alias (not an interface) so it is assignable to plain header records.
export type SignedHeaders = {
  'x-key-id': string;
  'x-timestamp': string;
  'x-nonce': string;
  'x-signature': string;
};

export interface SignRequestInput {
  keyId: string;
  secret: string;
  method: string;
  path: string;
  body?: BodyInput;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  nonce?: string;
}

/** Produces the four NCS1 headers for a request. Sign the exact bytes that will be sent. */
export async function signRequest(input: SignRequestInput): Promise<SignedHeaders> {
  const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = input.nonce ?? randomHex(16);
  const canonical = await canonicalString({
    method: input.method,
    path: input.path,
    timestamp,
    nonce,
    body: input.body,
  });
  const signature = await hmacBase64(await signingKeyOf(input.secret), canonical);
  return { 'x-key-id': input.keyId, 'x-timestamp': timestamp, 'x-nonce': nonce, 'x-signature': signature };
}

/** Verifies a signature against the stored secret hash with a constant-time comparison. */
export async function verifySignature(input: {
  secretSha256Hex: string;
  method: string;
  path: string;
  timestamp: string;
  nonce: string;
  body?: BodyInput;
  signature: string;
}): Promise<boolean> {
  const canonical = await canonicalString(input);
  const expected = await hmacBase64(input.secretSha256Hex, canonical);
  return timingSafeEqualString(expected, input.signature);
}
