/**
 * Console passwords (issue 16): scrypt from node:crypto, a memory-hard KDF. Parameters: N = 2^15,
 * r = 8, p = 1 (128 * N * r = 32 MiB per hash, 50-100 ms on one core), a 16-byte random salt and a
 * 32-byte key. The stored string names its parameters, so they can be raised later and old hashes
 * still verify (docs/console.md, "Accounts").
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

export const SCRYPT = Object.freeze({ log2N: 15, r: 8, p: 1, saltBytes: 16, keyBytes: 32 });
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 1024;

const derive = (password: string, salt: Buffer, keyLen: number, o: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keyLen, o, (err, key) => (err ? reject(err) : resolve(key))),
  );

const options = (log2N: number, r: number, p: number): ScryptOptions => ({
  N: 2 ** log2N,
  r,
  p,
  // Node's default maxmem (32 MiB) is exactly 128 * N * r at these parameters: leave room.
  maxmem: 256 * 2 ** log2N * r,
});

export interface ScryptParams {
  log2N: number;
  r: number;
  p: number;
}

/** `params`: SCRYPT always, except in tests that trade hashing cost for speed (verification reads them back). */
export async function hashPassword(password: string, params: ScryptParams = SCRYPT): Promise<string> {
  const salt = randomBytes(SCRYPT.saltBytes);
  const key = await derive(password, salt, SCRYPT.keyBytes, options(params.log2N, params.r, params.p));
  return ['scrypt', params.log2N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

const FORMAT = /^scrypt\$(\d{1,2})\$(\d{1,2})\$(\d{1,2})\$([A-Za-z0-9_-]{8,64})\$([A-Za-z0-9_-]{16,128})$/;

/**
 * True when `password` matches `stored`, compared in constant time. A stored string that does not
 * parse verifies nothing, after the same work as a real one (so timing does not tell).
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = FORMAT.exec(stored);
  const ok = m !== null && Number(m[1]) >= 10 && Number(m[1]) <= 20 && Number(m[2]) <= 32 && Number(m[3]) <= 16;
  const [log2N, r, p] = ok ? [Number(m[1]), Number(m[2]), Number(m[3])] : [SCRYPT.log2N, SCRYPT.r, SCRYPT.p];
  const salt = ok ? Buffer.from(m[4], 'base64url') : Buffer.alloc(SCRYPT.saltBytes);
  const expected = ok ? Buffer.from(m[5], 'base64url') : Buffer.alloc(SCRYPT.keyBytes);
  const key = await derive(password, salt, expected.length, options(log2N, r, p));
  return timingSafeEqual(key, expected) && ok;
}

/**
 * A valid hash of a random password, made once: sign-in with an unknown email verifies against it,
 * so it costs the same scrypt as a known one (issue 16: failures answer the same, in constant time).
 */
let decoy: Promise<string> | undefined;
export const decoyHash = (): Promise<string> => (decoy ??= hashPassword(randomBytes(32).toString('hex')));
