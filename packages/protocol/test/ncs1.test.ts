/**
 * NCS1 (spec: Authentication, "Request signing"). Expected values are computed here independently
 * with node:crypto, and one vector is written down literally, worked out by hand:
 *
 *   secret    sk_test_0123456789abcdef
 *   HMAC key  the 64 lowercase-hex characters of SHA-256(secret), used as ASCII text:
 *             6f752b7237c6e81c9f1fdf06e58fb8ed22cbe0f51ef7eeb5a4b8dd0003d089af
 *   request   POST /sdk/v1/measurements?advanced=true, x-timestamp 1700000000,
 *             x-nonce nonce-0123456789, body {"source":"web","durationSec":60}
 *   canonical NCS1\nPOST\n/sdk/v1/measurements\n1700000000\nnonce-0123456789\n
 *             d93d6d472a238e0430795f7738d326f742f954df1e8149e727b68ec94f8f7031
 *   signature 08nt592HlYIcC1EYTeevsk9Gvt9sV+2JeIgaKG4kzMY=
 *
 * (With the 32 raw digest bytes as the key instead — a common mistake — the signature would be
 * mM36sPeV2u9mY34KSeeOhScdBwLcf0Z2BEgNHaTNH80=.)
 */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import {
  canonicalString,
  hmacBase64,
  pathWithoutQuery,
  sha256Hex,
  signingKeyOf,
  signRequest,
  verifySignature,
} from '../src/ncs1.js';

const SECRET = 'sk_test_0123456789abcdef';
const BODY = '{"source":"web","durationSec":60}';
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const nodeSha = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');
const nodeSign = (secret: string, canonical: string) =>
  createHmac('sha256', nodeSha(secret)).update(canonical).digest('base64');

describe('the literal vector', () => {
  test('canonical string, line by line', async () => {
    const c = await canonicalString({
      method: 'post',
      path: '/sdk/v1/measurements?advanced=true',
      timestamp: '1700000000',
      nonce: 'nonce-0123456789',
      body: BODY,
    });
    expect(c).toBe(
      'NCS1\nPOST\n/sdk/v1/measurements\n1700000000\nnonce-0123456789\nd93d6d472a238e0430795f7738d326f742f954df1e8149e727b68ec94f8f7031',
    );
  });

  test('the HMAC key is the lowercase-hex SHA-256 string of the secret', async () => {
    expect(await signingKeyOf(SECRET)).toBe('6f752b7237c6e81c9f1fdf06e58fb8ed22cbe0f51ef7eeb5a4b8dd0003d089af');
  });

  test('the exact base64 signature', async () => {
    const h = await signRequest({
      keyId: 'key_1',
      secret: SECRET,
      method: 'POST',
      path: '/sdk/v1/measurements?advanced=true',
      body: BODY,
      timestamp: 1700000000,
      nonce: 'nonce-0123456789',
    });
    expect(h).toEqual({
      'x-key-id': 'key_1',
      'x-timestamp': '1700000000',
      'x-nonce': 'nonce-0123456789',
      'x-signature': '08nt592HlYIcC1EYTeevsk9Gvt9sV+2JeIgaKG4kzMY=',
    });
    expect(h['x-signature']).not.toBe('mM36sPeV2u9mY34KSeeOhScdBwLcf0Z2BEgNHaTNH80=');
  });

  test('a GET signs the hash of the empty body', async () => {
    const c = await canonicalString({
      method: 'GET',
      path: '/sdk/v1/measurements/meas_0123456789abcdef01234567',
      timestamp: '1700000300',
      nonce: 'n0nce-xyz',
    });
    expect(c.split('\n')[5]).toBe(EMPTY_SHA256);
    expect(await hmacBase64(await signingKeyOf(SECRET), c)).toBe('Kcb8Kr2ZfNXgwlE26NQ9hNjCj+xHL2Sw5szkbQLfGQU=');
  });
});

describe('computed independently with node:crypto', () => {
  const cases = [
    { method: 'POST', path: '/sdk/v1/auth/test', body: '' },
    { method: 'POST', path: '/sdk/v1/measurements', body: '{"source":"web","userRef":"ünïcödé-✓"}' },
    { method: 'GET', path: '/sdk/v1/users/alice%40x/baseline', body: undefined },
    { method: 'GET', path: '/sdk/v1/logs', body: undefined },
  ];
  test.for(cases)('$method $path', async (c) => {
    const ts = '1762000000';
    const nonce = 'abcdefgh12345678';
    const canonical = ['NCS1', c.method, c.path, ts, nonce, nodeSha(c.body ?? '')].join('\n');
    expect(await canonicalString({ ...c, timestamp: ts, nonce })).toBe(canonical);
    const h = await signRequest({
      keyId: 'k',
      secret: SECRET,
      method: c.method,
      path: `${c.path}?q=1&r=2`,
      body: c.body,
      timestamp: Number(ts),
      nonce,
    });
    expect(h['x-signature']).toBe(nodeSign(SECRET, canonical));
  });

  test('bytes and strings of the same content sign the same', async () => {
    const bytes = new TextEncoder().encode(BODY);
    expect(await sha256Hex(bytes)).toBe(nodeSha(BODY));
    expect(await sha256Hex(BODY)).toBe(nodeSha(BODY));
  });

  test('binary bodies are hashed as bytes', async () => {
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 255);
    expect(await sha256Hex(bytes)).toBe(nodeSha(bytes));
  });
});

describe('verifySignature', () => {
  const base = {
    method: 'POST',
    path: '/sdk/v1/measurements',
    timestamp: '1700000000',
    nonce: 'nonce-0123456789',
    body: BODY,
  };
  const good = '08nt592HlYIcC1EYTeevsk9Gvt9sV+2JeIgaKG4kzMY=';
  const secretSha256Hex = createHash('sha256').update(SECRET).digest('hex');

  test('accepts the right signature with the stored hash, query ignored', async () => {
    expect(
      await verifySignature({ ...base, path: `${base.path}?advanced=true`, secretSha256Hex, signature: good }),
    ).toBe(true);
  });

  test.for([
    ['method', { method: 'PUT' }],
    ['path', { path: '/sdk/v1/measurement' }],
    ['timestamp', { timestamp: '1700000001' }],
    ['nonce', { nonce: 'nonce-0123456788' }],
    ['body', { body: BODY.replace('60', '61') }],
    ['body whitespace', { body: BODY.replace(',', ', ') }],
    ['signature', { signature: good.replace('0', '1') }],
    ['truncated signature', { signature: good.slice(0, -1) }],
    ['secret hash', { secretSha256Hex: secretSha256Hex.replace(/^./, '0') }],
  ] as const)('rejects a changed %s', async ([, change]) => {
    expect(await verifySignature({ ...base, secretSha256Hex, signature: good, ...change })).toBe(false);
  });
});

test('pathWithoutQuery keeps the path only', () => {
  expect(pathWithoutQuery('/a/b?c=d?e')).toBe('/a/b');
  expect(pathWithoutQuery('/a/b')).toBe('/a/b');
});

test('signRequest makes a fresh nonce of 8-128 characters and a Unix-seconds timestamp', async () => {
  const a = await signRequest({ keyId: 'k', secret: 's', method: 'GET', path: '/x' });
  const b = await signRequest({ keyId: 'k', secret: 's', method: 'GET', path: '/x' });
  expect(a['x-nonce']).not.toBe(b['x-nonce']);
  expect(a['x-nonce'].length).toBeGreaterThanOrEqual(8);
  expect(a['x-nonce'].length).toBeLessThanOrEqual(128);
  expect(Math.abs(Number(a['x-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
});
