/**
 * Unmetered unless a balance is set (CLARIFICATIONS 28; issue 14, item 2): an organization whose
 * balance was never set starts cloud sessions and batch jobs without a balance check and never
 * gets `insufficient_tokens`, while its usage is still recorded; a balance (0 included) turns the
 * check on; the operator sets or clears it (`vitals-server orgs balance`, run here in-process on
 * the world's store, as a second process would). The key's own caps apply either way. On SQLite,
 * and on PostgreSQL with VITALS_TEST_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { keysCreate, orgsBalance, orgsCreate } from '../src/cli/admin.js';
import { UsageError } from '../src/cli/args.js';
import { setTokenBalance, MAX_TOKEN_BALANCE_USD } from '../src/domain/balance.js';
import { addMonthUsage, monthOf } from '../src/store/metering.js';
import { getOrg } from '../src/store/orgs-keys.js';
import type { TestKey } from '../src/testing.js';
import {
  createBatchWorld,
  createJob,
  jobBody,
  json,
  phantomFramesFile,
  upload,
  usageOf,
  waitFor,
  type BatchWorld,
} from './batch-world.js';

let w: BatchWorld;
/** What an operator command run beside the server sees: the same data dir or database. */
let operator: Config;
const frames = (): Uint8Array => phantomFramesFile({ durationSec: 20 });
beforeAll(async () => {
  w = await createBatchWorld({ batch: { embeddedWorker: true } });
  operator = loadConfig({
    VITALS_DATA_DIR: w.dataDir,
    ...(w.databaseUrl ? { VITALS_DATABASE_URL: w.databaseUrl } : {}),
  });
});
afterAll(() => w.close());

const startSession = (key: TestKey) =>
  w.call({
    method: 'POST',
    url: '/sdk/v1/cloud/sessions',
    body: { platform: 'web', durationSec: 30, consent: true },
    key,
  });

async function startJob(key: TestKey) {
  const { objectKey, sha256 } = await upload(w, frames(), 'frames', key);
  return w.call({ method: 'POST', url: '/sdk/v1/cloud/jobs', body: jobBody(objectKey, sha256), key });
}

/** Status and error code of a session and a job started with the key. */
async function outcomes(key: TestKey): Promise<Array<[number, string | undefined]>> {
  const results = [await startSession(key), await startJob(key)];
  return results.map((r) => [r.statusCode, json(r).error?.code]);
}

const facts = async (key: TestKey) => json(await w.call({ method: 'POST', url: '/sdk/v1/auth/test', key })).data;

describe('cloud sessions and batch jobs by kind of organization', () => {
  test.for([
    ['unmetered (balance never set)', null, [201, undefined]],
    ['metered at $0', 0, [403, 'insufficient_tokens']],
    ['metered below the cost', 0.001, [403, 'insufficient_tokens']],
    ['metered at $100', 100, [201, undefined]],
  ] as const)('%s', async ([, balance, expected]) => {
    const key = await w.newKey({ tokenBalanceUsd: balance });
    expect(await outcomes(key)).toEqual([expected, expected]);
  });

  test('an unmetered organization completes a job: usage recorded, no balance drawn', async () => {
    const key = await w.newKey({ tokenBalanceUsd: null });
    const job = await createJob(w, frames(), {}, key);
    expect((await waitFor(w, job.jobId)).status).toBe('completed');
    const used = await usageOf(w, key.keyId);
    expect(used.seconds).toBeGreaterThan(15);
    expect(used.tokens).toBeGreaterThan(0);
    expect((await getOrg(w.ctx.db.db, key.orgId))!.tokenBalanceMicro).toBeNull();
    expect(await facts(key)).toMatchObject({
      metering: 'unmetered',
      tokenBalanceUsd: null,
      quotas: { cloudSecondsUsed: used.seconds },
    });
  });

  test("the key's own caps still apply to an unmetered organization", async () => {
    const month = monthOf(w.clock.now());
    const seconds = await w.newKey({ tokenBalanceUsd: null, quotaSecondsMonth: 60 });
    await addMonthUsage(w.ctx.db.db, seconds.keyId, month, 60, 0);
    expect(await outcomes(seconds)).toEqual([
      [403, 'quota_exceeded'],
      [403, 'quota_exceeded'],
    ]);
    const tokens = await w.newKey({ tokenBalanceUsd: null, tokenQuotaMonthUsd: 1 });
    await addMonthUsage(w.ctx.db.db, tokens.keyId, month, 0, 1_000_000);
    expect(await outcomes(tokens)).toEqual([
      [403, 'token_quota_exceeded'],
      [403, 'token_quota_exceeded'],
    ]);
  });
});

describe('the operator sets and clears a balance', () => {
  test('keys create without --org makes an unmetered organization whose key starts work', async () => {
    const created = (await keysCreate(operator, {})) as TestKey;
    expect((await getOrg(w.ctx.db.db, created.orgId))!.tokenBalanceMicro).toBeNull();
    expect(await facts(created)).toMatchObject({ metering: 'unmetered', tokenBalanceUsd: null });
    expect(await outcomes(created)).toEqual([
      [201, undefined],
      [201, undefined],
    ]);
  });

  test('orgs create: without --token-balance unmetered, with it (0 included) metered', async () => {
    const plain = (await orgsCreate(operator, { name: 'plain' })) as { orgId: string };
    const zero = (await orgsCreate(operator, { name: 'zero', tokenBalance: '0' })) as { orgId: string };
    const some = (await orgsCreate(operator, { name: 'some', tokenBalance: '12.5' })) as { orgId: string };
    expect((await getOrg(w.ctx.db.db, plain.orgId))!.tokenBalanceMicro).toBeNull();
    expect((await getOrg(w.ctx.db.db, zero.orgId))!.tokenBalanceMicro).toBe(0);
    expect((await getOrg(w.ctx.db.db, some.orgId))!.tokenBalanceMicro).toBe(12_500_000);
  });

  test('orgs balance ORG --set 0 refuses new work; --unmetered accepts it again; auth/test follows', async () => {
    const key = await w.newKey({ tokenBalanceUsd: null });
    expect(await orgsBalance(operator, key.orgId, { set: '0' })).toEqual({
      orgId: key.orgId,
      metering: 'metered',
      tokenBalanceUsd: 0,
    });
    expect(await facts(key)).toMatchObject({ metering: 'metered', tokenBalanceUsd: 0 });
    expect(await outcomes(key)).toEqual([
      [403, 'insufficient_tokens'],
      [403, 'insufficient_tokens'],
    ]);
    expect(await orgsBalance(operator, key.orgId, { unmetered: true })).toEqual({
      orgId: key.orgId,
      metering: 'unmetered',
      tokenBalanceUsd: null,
    });
    expect(await facts(key)).toMatchObject({ metering: 'unmetered', tokenBalanceUsd: null });
    expect((await outcomes(key)).map(([status]) => status)).toEqual([201, 201]);
  });

  test.for([
    ['no ORG', undefined, { set: '5' }],
    ['neither --set nor --unmetered', 'org_x', {}],
    ['both --set and --unmetered', 'org_x', { set: '5', unmetered: true }],
    ['a negative amount', 'org_x', { set: '-1' }],
    ['not a number', 'org_x', { set: 'ten' }],
    ['an empty amount', 'org_x', { set: '' }],
    ['over the largest balance', 'org_x', { set: String(MAX_TOKEN_BALANCE_USD * 2) }],
    ['an unknown organization', 'org_nope', { set: '5' }],
  ] as const)('orgs balance refuses %s (a usage error, exit 2)', async ([, org, opts]) => {
    await expect(orgsBalance(operator, org, opts)).rejects.toBeInstanceOf(UsageError);
  });

  test.for([
    ['negative', -1],
    ['not finite', Number.POSITIVE_INFINITY],
    ['NaN', Number.NaN],
    ['too large', MAX_TOKEN_BALANCE_USD + 1],
  ] as const)(
    'setTokenBalance (the console calls it too) refuses a %s amount with validation_error',
    async ([, usd]) => {
      const key = await w.newKey({ tokenBalanceUsd: 5 });
      await expect(setTokenBalance(w.ctx.db.db, key.orgId, usd)).rejects.toMatchObject({ code: 'validation_error' });
      expect((await getOrg(w.ctx.db.db, key.orgId))!.tokenBalanceMicro).toBe(5_000_000);
    },
  );

  test('setTokenBalance of an unknown organization returns undefined (the caller answers 404)', async () => {
    expect(await setTokenBalance(w.ctx.db.db, 'org_nope', 1)).toBeUndefined();
  });
});
