/**
 * What an unauthenticated client can make the service store (issue 19, defect 6): refused
 * signatures are throttled per client address (FAILED_SIGNATURES_PER_MIN a minute, then 429
 * rate_limited with the RateLimit-* headers), and refusals that name no key are counted per address,
 * hour and code instead of written as one usage row each.
 */
import { describe, expect } from 'vitest';
import { json, test, type World } from './helpers.js';
import { FAILED_SIGNATURES_PER_MIN } from '../src/auth/signature.js';
import {
  clientAddress,
  REJECTION_BUCKET_MS,
  REJECTION_RETENTION_MS,
  sweepRejections,
} from '../src/store/auth-rejections.js';

const AUTH = { method: 'POST', url: '/sdk/v1/auth/test' };
const stranger = (w: World) => ({ ...w.key, keyId: 'key_000000000000000000000000' });
const counts = (w: World) =>
  w.t.ctx.db.db.selectFrom('auth_rejections').selectAll().orderBy('error_code').orderBy('key_id').execute();
const usageRows = (w: World) => w.t.ctx.db.db.selectFrom('usage_log').selectAll().execute();

describe('failed signatures per address', () => {
  test('an unknown key id, 200 times: 60 refusals 401, then 429 with RateLimit-*, and no usage row', async ({
    world,
  }) => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 200; i++) {
      last = await world.call({ ...AUTH, key: stranger(world) });
      statuses.push(last.statusCode);
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(FAILED_SIGNATURES_PER_MIN);
    expect(statuses.slice(FAILED_SIGNATURES_PER_MIN).every((s) => s === 429)).toBe(true);
    expect(json(last!).error.code).toBe('rate_limited');
    expect(last!.headers['ratelimit-limit']).toBe(String(FAILED_SIGNATURES_PER_MIN));
    expect(last!.headers['ratelimit-remaining']).toBe('0');
    expect(Number(last!.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
    expect(last!.headers['x-request-id']).toMatch(/^req_/);
    expect(await usageRows(world)).toEqual([]);
    expect(await counts(world)).toMatchObject([
      { address: '127.0.0.1', key_id: '', error_code: 'rate_limited', count: 200 - FAILED_SIGNATURES_PER_MIN },
      { address: '127.0.0.1', key_id: '', error_code: 'unknown_key', count: FAILED_SIGNATURES_PER_MIN },
    ]);
  });

  test('a known key with a wrong secret: rows for the first 60, one rate_limited row, the rest counted; valid calls pass', async ({
    world,
  }) => {
    for (let i = 0; i < FAILED_SIGNATURES_PER_MIN; i++)
      expect((await world.call({ ...AUTH, signSecret: 'sk_wrong' })).statusCode).toBe(401);
    for (let i = 0; i < 5; i++) expect((await world.call({ ...AUTH, signSecret: 'sk_wrong' })).statusCode).toBe(429);
    // Only failures are throttled: the address's valid calls still go through.
    expect((await world.call(AUTH)).statusCode).toBe(200);
    const rows = await usageRows(world);
    expect(rows.filter((r) => r.error_code === 'invalid_signature')).toHaveLength(FAILED_SIGNATURES_PER_MIN);
    expect(rows.filter((r) => r.error_code === 'rate_limited')).toMatchObject([
      { key_id: world.key.keyId, status: 'rate_limited' },
    ]);
    expect(rows.filter((r) => r.status === 'success')).toHaveLength(1);
    expect(await counts(world)).toMatchObject([{ key_id: world.key.keyId, error_code: 'rate_limited', count: 4 }]);
    // A minute later the address starts afresh.
    world.clock.advance(60_000);
    expect((await world.call({ ...AUTH, signSecret: 'sk_wrong' })).statusCode).toBe(401);
  });

  test('another address is not held back by this one', async ({ world }) => {
    const unsigned = (remoteAddress: string) => world.app.inject({ ...AUTH, remoteAddress } as never);
    for (let i = 0; i < FAILED_SIGNATURES_PER_MIN; i++) await unsigned('203.0.113.7');
    expect((await unsigned('203.0.113.7')).statusCode).toBe(429);
    expect((await unsigned('198.51.100.9')).statusCode).toBe(401);
    // One IPv6 /64 is one address.
    for (let i = 0; i < FAILED_SIGNATURES_PER_MIN; i++) await unsigned(`2001:db8:1:2::${i.toString(16)}`);
    expect((await unsigned('2001:db8:1:2:ffff::1')).statusCode).toBe(429);
    expect((await unsigned('2001:db8:1:3::1')).statusCode).toBe(401);
  });

  test('unknown-key refusals are counted per hour: a new hour is a new row', async ({ world }) => {
    await world.call({ ...AUTH, key: stranger(world) });
    world.clock.advance(REJECTION_BUCKET_MS);
    await world.call({ ...AUTH, key: stranger(world) });
    await world.call({ ...AUTH, key: stranger(world) });
    const rows = await counts(world);
    expect(rows.map((r) => Number(r.count)).sort()).toEqual([1, 2]);
    expect(rows.every((r) => Number(r.bucket_start) % REJECTION_BUCKET_MS === 0)).toBe(true);
  });
});

describe('client address', () => {
  test.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:10.1.2.3', '10.1.2.3'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    [undefined, 'unknown'],
  ])('%s → %s', (ip, address) => expect(clientAddress(ip)).toBe(address));
});

describe('retention', () => {
  test('counts older than the retention are swept, newer ones kept', async ({ world }) => {
    await world.call({ ...AUTH, key: stranger(world) });
    world.clock.advance(REJECTION_RETENTION_MS + REJECTION_BUCKET_MS);
    await world.call({ ...AUTH, key: stranger(world) });
    expect(await sweepRejections(world.t.ctx.db.db, world.clock.now() - REJECTION_RETENTION_MS)).toBe(1);
    expect(await counts(world)).toHaveLength(1);
  });
});
