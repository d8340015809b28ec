/**
 * Organization token balances (CLARIFICATIONS 28). An organization whose balance was never set is
 * unmetered: nothing checks a balance and `insufficient_tokens` never happens, while usage is still
 * recorded per key and the key's own caps (`quotaSecondsMonth`, `tokenQuotaMonth`) still apply.
 * Setting a balance (0 included) turns the check on; clearing it makes the organization unmetered
 * again. Everywhere in code a balance of `null` means unmetered.
 *
 * The one place that changes a balance: the operator command (`vitals-server orgs balance`,
 * `orgs create --token-balance`) and the console's routes call these functions.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { getOrg, microFromUsd, setOrgTokenBalance, usdFromMicro, type OrgRecord } from '../store/orgs-keys.js';
import { ApiError } from '../errors.js';

/** The largest balance accepted, in dollars (bounded input; its micro-dollars stay exact in a double). */
export const MAX_TOKEN_BALANCE_USD = 1_000_000_000;

/** How a balance reads on the wire (auth/test; console): `tokenBalanceUsd` is null when unmetered. */
export interface TokenBalanceView {
  metering: 'metered' | 'unmetered';
  tokenBalanceUsd: number | null;
}

export function tokenBalanceView(org: Pick<OrgRecord, 'tokenBalanceMicro'> | undefined): TokenBalanceView {
  const micro = org?.tokenBalanceMicro ?? null;
  return micro === null
    ? { metering: 'unmetered', tokenBalanceUsd: null }
    : { metering: 'metered', tokenBalanceUsd: usdFromMicro(micro) };
}

/** Why `usd` cannot be a balance (a sentence for an error message), or undefined when it can. */
export function balanceProblem(usd: number): string | undefined {
  if (!Number.isFinite(usd) || usd < 0) return 'a token balance is a non-negative number of dollars';
  if (usd > MAX_TOKEN_BALANCE_USD) return `a token balance is at most ${MAX_TOKEN_BALANCE_USD} dollars`;
  return undefined;
}

/**
 * Sets an organization's balance in dollars (metered from now on), or clears it with null
 * (unmetered). Throws 400 `validation_error` for an amount `balanceProblem` refuses; returns the
 * organization as stored, or undefined when there is none (callers answer their own 404).
 */
export async function setTokenBalance(
  db: Kysely<Database>,
  orgId: string,
  usd: number | null,
): Promise<OrgRecord | undefined> {
  if (usd !== null) {
    const problem = balanceProblem(usd);
    if (problem) throw new ApiError('validation_error', problem);
  }
  if (!(await setOrgTokenBalance(db, orgId, usd === null ? null : microFromUsd(usd)))) return undefined;
  return getOrg(db, orgId);
}

/** Whether the organization may start work costing `costMicro`: always when unmetered. */
export function balanceCovers(org: Pick<OrgRecord, 'tokenBalanceMicro'>, costMicro: number): boolean {
  return org.tokenBalanceMicro === null || org.tokenBalanceMicro >= costMicro;
}
