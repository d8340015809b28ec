/** Operator commands (CONTRACT.md): orgs create|balance, keys create|disable|enable. */
import type { Config } from '../config.js';
import { createContext, closeContext } from '../deps.js';
import { createKey, createOrg, getOrg, microFromUsd, setKeyStatus } from '../store/orgs-keys.js';
import { balanceProblem, setTokenBalance, tokenBalanceView } from '../domain/balance.js';
import { FEATURES } from '@vitals/protocol';
import { UsageError } from './args.js';

/** A `--token-balance` / `--set` amount in dollars, or a usage error. */
function balanceUsd(flag: string, raw: string): number {
  const usd = raw.trim() === '' ? NaN : Number(raw);
  const problem = balanceProblem(usd);
  if (problem) throw new UsageError(`${flag}: ${problem}`);
  return usd;
}

/** Without `--token-balance` the organization is unmetered (CLARIFICATIONS 28); with it (0 included), metered. */
export async function orgsCreate(config: Config, opts: { name?: string; tokenBalance?: string }): Promise<object> {
  if (!opts.name) throw new UsageError('orgs create needs --name N');
  const balance = opts.tokenBalance === undefined ? null : balanceUsd('--token-balance', opts.tokenBalance);
  const ctx = await createContext(config);
  try {
    const org = await createOrg(ctx.db.db, opts.name, balance, ctx.clock.now());
    return { orgId: org.id };
  } finally {
    await closeContext(ctx);
  }
}

/** `orgs balance ORG (--set USD | --unmetered)`: sets or clears the balance (domain/balance.ts). */
export async function orgsBalance(
  config: Config,
  orgId: string | undefined,
  opts: { set?: string; unmetered?: boolean },
): Promise<object> {
  const usage = 'usage: orgs balance ORG (--set USD | --unmetered)';
  if (!orgId || (opts.set === undefined) === !opts.unmetered) throw new UsageError(usage);
  const usd = opts.set === undefined ? null : balanceUsd('--set', opts.set);
  const ctx = await createContext(config);
  try {
    const org = await setTokenBalance(ctx.db.db, orgId, usd);
    if (!org) throw new UsageError(`no organization ${orgId}`);
    return { orgId, ...tokenBalanceView(org) };
  } finally {
    await closeContext(ctx);
  }
}

function optionalNumber(name: string, v: string | undefined, integer = true): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n)))
    throw new UsageError(`${name} must be a non-negative ${integer ? 'integer' : 'number'}`);
  return n;
}

export async function keysCreate(
  config: Config,
  opts: {
    org?: string;
    rateLimitPerMin?: string;
    quotaSecondsMonth?: string;
    tokenQuotaMonth?: string;
    expiresAt?: string;
    features?: string;
    mode?: string;
  },
): Promise<object> {
  const rate = optionalNumber('--rate-limit-per-min', opts.rateLimitPerMin);
  const quota = optionalNumber('--quota-seconds-month', opts.quotaSecondsMonth);
  const tokenQuota = optionalNumber('--token-quota-month', opts.tokenQuotaMonth, false);
  const expiresAt = optionalNumber('--expires-at', opts.expiresAt);
  let features: string[] | undefined;
  if (opts.features !== undefined) {
    features = opts.features
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean);
    const unknown = features.filter((f) => !(FEATURES as readonly string[]).includes(f));
    if (unknown.length)
      throw new UsageError(`unknown feature(s): ${unknown.join(', ')} (known: ${FEATURES.join(', ')})`);
  }
  const ctx = await createContext(config);
  try {
    const now = ctx.clock.now();
    let orgId = opts.org;
    if (orgId) {
      if (!(await getOrg(ctx.db.db, orgId))) throw new UsageError(`no organization ${orgId}`);
    } else {
      // A new organization is unmetered, as self-hosting wants (CLARIFICATIONS 28).
      orgId = (await createOrg(ctx.db.db, 'default', null, now)).id;
    }
    const { key, secret } = await createKey(
      ctx.db.db,
      {
        orgId,
        rateLimitPerMin: rate,
        quotaSecondsMonth: quota ?? null,
        tokenQuotaMonthMicro: tokenQuota === undefined ? null : microFromUsd(tokenQuota),
        expiresAt: expiresAt ?? null,
        features,
        mode: opts.mode === 'test' ? 'test' : 'live',
      },
      now,
    );
    return { keyId: key.id, secret, orgId };
  } finally {
    await closeContext(ctx);
  }
}

export async function keysSetStatus(
  config: Config,
  keyId: string | undefined,
  status: 'active' | 'disabled',
): Promise<object> {
  if (!keyId) throw new UsageError(`keys ${status === 'active' ? 'enable' : 'disable'} needs KEY_ID`);
  const ctx = await createContext(config);
  try {
    if (!(await setKeyStatus(ctx.db.db, keyId, status))) throw new UsageError(`no key ${keyId}`);
    return { keyId, status };
  } finally {
    await closeContext(ctx);
  }
}
