/** Wire shapes of the console API (protocol schemas/console.ts) from the store's records. */
import type { ConsoleDelivery, ConsoleEndpoint, ConsoleKey } from '@vitals/protocol';
import { usdFromMicro, type KeyRecord, type OrgRecord } from '../store/orgs-keys.js';
import type { DeliveryRow } from '../webhooks/journal.js';
import { tokenBalanceView } from '../domain/balance.js';

/** The organization's balance in dollars; null when it was never set (unmetered; domain/balance.ts). */
export function balanceUsdOf(org: Pick<OrgRecord, 'tokenBalanceMicro'> | undefined): number | null {
  return tokenBalanceView(org).tokenBalanceUsd;
}

export function keyView(k: KeyRecord, lastUsedAt: number | null): ConsoleKey {
  return {
    keyId: k.id,
    name: k.name,
    mode: k.mode,
    status: k.status,
    createdAt: k.createdAt,
    expiresAt: k.expiresAt,
    rateLimitPerMin: k.rateLimitPerMin,
    quotaSecondsMonth: k.quotaSecondsMonth,
    tokenQuotaMonthUsd: k.tokenQuotaMonthMicro === null ? null : usdFromMicro(k.tokenQuotaMonthMicro),
    features: k.features,
    lastUsedAt,
  };
}

export function endpointView(e: {
  id: string;
  url: string;
  status: string;
  created_at: number;
  rotated_at: number | null;
}): ConsoleEndpoint {
  return {
    id: e.id,
    url: e.url,
    status: e.status,
    createdAt: Number(e.created_at),
    rotatedAt: e.rotated_at === null ? null : Number(e.rotated_at),
  };
}

export function deliveryView(d: DeliveryRow): ConsoleDelivery {
  return {
    id: d.id,
    target: d.target === 'job' ? 'job' : 'endpoint',
    endpointId: d.endpoint_id,
    event: d.event,
    jobId: d.job_id,
    url: d.url,
    status: d.status as ConsoleDelivery['status'],
    httpStatus: d.last_status_code,
    attempts: d.attempts,
    maxAttempts: d.max_attempts,
    lastError: d.last_error,
    responseTimeMs: d.last_response_ms,
    nextAttemptAt: d.next_attempt_at,
    redeliveryOf: d.redelivery_of,
    createdAt: d.created_at,
    updatedAt: d.updated_at,
  };
}
