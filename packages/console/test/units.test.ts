/**
 * The console's pure helpers: chart scales and ticks, PPG decimation, the router's path matching,
 * query strings, display formats and the plain words for error codes.
 */
import { describe, expect, test } from 'vitest';
import { USAGE_ERROR_CODES } from '@vitals/protocol';
import { decimate, linear, niceTicks } from '../src/charts/scale.js';
import { match } from '../src/router.js';
import { queryString } from '../src/api/client.js';
import { fmtSeconds, fmtUsd, monthOf } from '../src/format.js';
import { errorWords, USAGE_ERROR_WORDS } from '../src/words.js';

describe('chart scales', () => {
  test.each([
    [0, 7, 4, [0, 2, 4, 6, 8]],
    [0, 1, 4, [0, 0.5, 1]],
    [62, 75, 4, [60, 65, 70, 75]],
    [0, 100, 4, [0, 50, 100]],
  ])('niceTicks(%d, %d, %d) covers the range with round steps', (min, max, count, want) => {
    expect(niceTicks(min, max, count)).toEqual(want);
  });

  test('counts get whole steps', () => {
    expect(niceTicks(0, 1, 4, true)).toEqual([0, 1]);
    expect(niceTicks(0, 3, 4, true)).toEqual([0, 1, 2, 3]);
  });

  test('a constant series still gets a range around its value', () => {
    const t = niceTicks(70, 70);
    expect(t[0]).toBeLessThan(70);
    expect(t[t.length - 1]).toBeGreaterThan(70);
  });

  test('linear maps the domain onto the range (inverted for SVG y)', () => {
    const y = linear([0, 10], [200, 0]);
    expect([y(0), y(5), y(10)]).toEqual([200, 100, 0]);
  });

  test('decimate keeps every bucket extreme, so a one-sample peak survives', () => {
    const values = Array.from({ length: 10_000 }, (_, i) => (i === 4321 ? 50 : i === 777 ? -50 : Math.sin(i / 30)));
    const out = decimate(values, 400);
    expect(out.length).toBeLessThanOrEqual(400);
    expect(out).toContainEqual([4321, 50]);
    expect(out).toContainEqual([777, -50]);
    expect(out.map(([i]) => i)).toEqual([...out.map(([i]) => i)].sort((a, b) => a - b));
    expect(decimate([1, 2, 3], 400)).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
    ]);
  });
});

describe('router', () => {
  test.each([
    ['/users/:keyId/:userRef', '/users/key_1/alice', { keyId: 'key_1', userRef: 'alice' }],
    ['/users/:keyId/:userRef', '/users/key_1/a%3Ab%40c', { keyId: 'key_1', userRef: 'a:b@c' }],
    ['/measurements/:id', '/measurements/meas_1', { id: 'meas_1' }],
    ['/users/:keyId/:userRef', '/users/key_1', null],
    ['/measurements/:id', '/keys/x', null],
  ])('match(%s, %s)', (pattern, path, want) => {
    expect(match(pattern, path)).toEqual(want);
  });
});

test('queryString drops empty values and encodes the rest', () => {
  expect(queryString({ keyId: 'key_1', status: '', cursor: undefined, from: 5, q: 'a b&c' })).toBe(
    '?keyId=key_1&from=5&q=a+b%26c',
  );
  expect(queryString({})).toBe('');
});

test('formats', () => {
  expect([fmtSeconds(45), fmtSeconds(200), fmtSeconds(3720), fmtSeconds(null)]).toEqual([
    '45 s',
    '3 min 20 s',
    '1 h 02 min',
    '—',
  ]);
  expect([fmtUsd(25), fmtUsd(0.0005), fmtUsd(1234.5), fmtUsd(null)]).toEqual(['$25.00', '$0.0005', '$1,234.50', '—']);
  expect(monthOf(Date.UTC(2026, 10, 30, 23, 59))).toBe('2026-11');
});

describe('plain words', () => {
  test('every usage-log errorCode of the spec has words', () => {
    for (const code of USAGE_ERROR_CODES) expect(USAGE_ERROR_WORDS[code], code).toBeTruthy();
  });

  test.each([
    [{ code: 'unauthorized', message: 'x' }, 'not signed in'],
    [{ code: 'rate_limited', message: 'x' }, 'Too many attempts'],
    [{ code: 'not_found', message: 'x' }, 'does not exist'],
    [{ code: 'validation_error', message: 'url must be https' }, 'not valid: url must be https'],
    [{ code: 'conflict', message: 'At most 5 endpoints per organization' }, 'At most 5 endpoints'],
    [{ code: 'network_error', message: 'x' }, 'could not be reached'],
    [{ code: 'some_new_code', message: 'Server sentence.' }, 'Server sentence.'],
  ])('%o reads as words', (err, words) => {
    expect(errorWords(err)).toContain(words);
  });
});
