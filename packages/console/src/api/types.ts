/**
 * Shapes of the console API (docs/console.md "API"). Measurement and baseline come from the
 * protocol package, the same types the server sends.
 */
import type { Measurement } from '@vitals/protocol';

export type { Measurement };

export interface Me {
  accountId: string;
  email: string;
  orgId: string;
  orgName?: string;
  balanceUsd?: number | null;
  sessionExpiresAt?: number;
}

export interface Overview {
  month: string;
  cloudSeconds: { used: number; quota: number | null };
  tokenSpendUsd: { used: number; cap: number | null };
  balanceUsd: number | null;
  measurementsPerDay: Array<{ day: string; count: number }>;
  qualityMix: { good: number; fair: number; poor: number };
  refusalsByCode: Array<{ errorCode: string; count: number }>;
  keys?: Array<{
    keyId: string;
    name: string | null;
    status: string;
    cloudSeconds: number;
    quotaSecondsMonth: number | null;
    tokensUsd: number;
    tokenQuotaMonthUsd: number | null;
  }>;
}

export type KeyStatus = 'active' | 'disabled';

export interface ApiKey {
  keyId: string;
  name?: string | null;
  mode?: 'live' | 'test';
  status: KeyStatus | string;
  createdAt: number;
  expiresAt: number | null;
  rateLimitPerMin: number;
  quotaSecondsMonth: number | null;
  tokenQuotaMonthUsd: number | null;
  features: string[];
  lastUsedAt?: number | null;
}

export interface KeyInput {
  name?: string | null;
  mode?: 'live' | 'test';
  expiresAt?: number | null;
  rateLimitPerMin?: number;
  quotaSecondsMonth?: number | null;
  tokenQuotaMonthUsd?: number | null;
  features?: string[];
  status?: KeyStatus;
}

export interface Endpoint {
  id: string;
  url: string;
  status?: string;
  createdAt: number;
  rotatedAt?: number | null;
}

export type DeliveryOutcome = 'succeeded' | 'failed' | 'pending';

export interface Delivery {
  id: string;
  target?: 'endpoint' | 'job';
  endpointId: string | null;
  url?: string;
  event: string;
  jobId: string | null;
  status: string;
  httpStatus: number | null;
  attempts: number;
  maxAttempts?: number;
  nextAttemptAt?: number | null;
  redeliveryOf?: string | null;
  lastError: string | null;
  responseTimeMs: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface Page<T> {
  items: T[];
  nextCursor?: string | null;
  total?: number;
  page?: number;
  perPage?: number;
  limit?: number;
  /** Usage: poll with `after=tailCursor` for newer rows. */
  tailCursor?: string;
}

export interface UsageRow {
  id: string;
  keyId: string;
  time: number;
  endpoint: string;
  method: string;
  status: 'success' | 'unauthorized' | 'rate_limited' | string;
  latencyMs: number | null;
  requestId: string;
  error: string | null;
  errorCode: string | null;
  qualityLevel: string | null;
}

export interface EndUser {
  keyId: string;
  userRef: string;
  measurements: number;
  firstSeenAt: number;
  lastSeenAt: number;
  avgQuality: number | null;
}

export interface BaselineMetric {
  median: number;
  mad: number;
  low: number;
  high: number;
  unit: string;
  samples: number;
}

export interface Baseline {
  userRef: string;
  status: 'ok' | 'insufficient_data';
  windowDays: number;
  minSamples: number;
  sampleCount: number;
  metrics: Record<string, BaselineMetric>;
  disclaimers: string[];
}

export interface Pricing {
  currency: string;
  unit: string;
  version: string;
  rates: {
    core: { perSecondUsd: number; includes: string[] };
    features: Record<string, { perSecondUsd: number }>;
    onDeviceSubmission?: { perMeasurementUsd: number };
  };
  metricSets?: Record<string, string[]>;
  packs: Array<{ id: string; priceUsd: number; tokensUsd: number }>;
  notes?: string[];
}

export interface Billing {
  balanceUsd: number | null;
  pricing: Pricing;
  spendByMonth: Array<{ month: string; tokensUsd: number; cloudSeconds: number }>;
  purchase: { provider: string; enabled: boolean };
  purchases?: Purchase[];
}

export interface Purchase {
  id: string;
  packId: string;
  priceUsd: number;
  tokensUsd: number;
  provider: string;
  status: 'completed' | 'pending' | 'failed' | string;
  createdAt: number;
}
