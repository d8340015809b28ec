/**
 * Batch-tier tuning, read once at the edge with the rest of the configuration (deps.ts passes the
 * process environment in). The spec's limits (sizes, TTLs, attempts) are not here: they come from
 * @vitals/protocol and Config. These knobs only pace the machinery; tests shorten them.
 *
 * | variable | meaning | default |
 * |---|---|---|
 * | VITALS_JOB_LEASE_SEC | how long a worker owns a running job without renewing (renewed every third) | 30 |
 * | VITALS_WORKER_POLL_MS | how often a worker scans the store for claimable jobs and due deliveries | 1000 |
 * | VITALS_WORKER_CONCURRENCY | jobs a worker process runs at once (videos each on a thread of their own: VITALS_MEDIA_THREADS) | the cores available, at least 2 |
 * | VITALS_SWEEP_INTERVAL_SEC | how often expired objects are swept | 30 |
 * | VITALS_WEBHOOK_RETRY_BASE_MS | first retry delay; attempt n waits base * 4^(n-1) | 5000 |
 * | VITALS_EMBEDDED_WORKER | `0`: `serve` runs no worker, on either store (run `vitals-server worker` beside it) | 1 |
 */
import os from 'node:os';
import { ConfigError } from '../config.js';

export interface BatchConfig {
  readonly leaseMs: number;
  readonly pollMs: number;
  readonly concurrency: number;
  readonly sweepMs: number;
  readonly webhookRetryBaseMs: number;
  /** `serve` runs a worker in-process (SQLite and PostgreSQL alike). */
  readonly embeddedWorker: boolean;
  /** A job claimed this many times without settling is failed (`internal_error`). */
  readonly maxJobAttempts: number;
}

function num(env: Record<string, string | undefined>, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new ConfigError(`${name} must be a number >= ${min}, got "${raw}"`);
  return n;
}

export function loadBatchConfig(env: Record<string, string | undefined>): BatchConfig {
  return Object.freeze({
    leaseMs: num(env, 'VITALS_JOB_LEASE_SEC', 30) * 1000,
    pollMs: num(env, 'VITALS_WORKER_POLL_MS', 1000, 10),
    concurrency: Math.floor(num(env, 'VITALS_WORKER_CONCURRENCY', Math.max(2, os.availableParallelism()))),
    sweepMs: num(env, 'VITALS_SWEEP_INTERVAL_SEC', 30) * 1000,
    webhookRetryBaseMs: num(env, 'VITALS_WEBHOOK_RETRY_BASE_MS', 5000, 0),
    maxJobAttempts: 3,
    embeddedWorker: env.VITALS_EMBEDDED_WORKER !== '0',
  });
}
