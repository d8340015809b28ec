/** Isomorphic byte helpers, checked against node:crypto / Buffer as the independent reference. */
import { describe, expect, test } from 'vitest';
import { fromBase64Url, toBase64, toBase64Url, toHex, timingSafeEqualString, randomHex } from '../src/encoding.js';

const samples = [0, 1, 2, 3, 4, 5, 31, 32, 33, 255].map((n) =>
  Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) & 255),
);

describe('encoding', () => {
  test.for(samples.map((s) => [s.length, s] as const))('%i bytes: hex and base64 match Buffer', ([, bytes]) => {
    expect(toHex(bytes)).toBe(Buffer.from(bytes).toString('hex'));
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
    expect(toBase64Url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
    expect(Array.from(fromBase64Url(toBase64Url(bytes))!)).toEqual(Array.from(bytes));
  });

  test('fromBase64Url refuses characters outside the alphabet', () => {
    expect(fromBase64Url('ab+c')).toBeNull();
    expect(fromBase64Url('ab=c')).toBeNull();
  });

  test.for([
    ['abc', 'abc', true],
    ['abc', 'abd', false],
    ['abc', 'ab', false],
    ['', '', true],
    ['', 'a', false],
  ] as const)('timingSafeEqualString(%s, %s) = %s', ([a, b, eq]) => {
    expect(timingSafeEqualString(a, b)).toBe(eq);
  });

  test('randomHex gives lowercase hex of twice the byte count', () => {
    expect(randomHex(12)).toMatch(/^[0-9a-f]{24}$/);
  });
});
