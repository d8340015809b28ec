/**
 * `vitals logs tail`: follows the usage log. The endpoint allows 60 requests a minute per key, so
 * it polls at most once a second and backs off on 429 as `RateLimit-Reset` says.
 */
import { LOGS_MIN_INTERVAL_MS } from '@vitals/sdk';
import { CliError } from '../errors.js';
import { loadConfig } from '../config.js';
import { makeClient } from '../client.js';
import type { CliIo } from '../io.js';
import { formatLogRow } from '../ui/format.js';

export interface TailOptions {
  since?: string;
  json?: boolean;
  follow?: boolean;
  interval?: string;
  limit?: string;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: epoch ms, an ISO date, or a span back from now (`90s`, `15m`, `2h`, `1d`). */
export function parseSince(text: string, now: number): number {
  const span = /^(\d+)([smhd])$/.exec(text);
  if (span) return now - Number(span[1]) * UNITS[span[2]];
  if (/^\d{10,}$/.test(text)) return Number(text);
  const t = Date.parse(text);
  if (Number.isNaN(t))
    throw new CliError('usage_error', `--since: expected epoch ms, an ISO date or a span like 15m, got "${text}"`);
  return t;
}

export async function logsTail(opts: TailOptions, io: CliIo): Promise<number> {
  const sinceTime = parseSince(opts.since ?? '1h', Date.now());
  const intervalMs = opts.interval === undefined ? 2000 : Number(opts.interval) * 1000;
  if (!Number.isFinite(intervalMs) || intervalMs < LOGS_MIN_INTERVAL_MS) {
    throw new CliError('usage_error', '--interval must be at least 1 second (the log allows 60 requests a minute)');
  }
  const limit = opts.limit === undefined ? 200 : Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new CliError('usage_error', '--limit must be 1..200');
  const client = makeClient(loadConfig(io.env), io);
  try {
    for await (const row of client.logs.iterate({
      sinceTime,
      limit,
      follow: opts.follow !== false,
      intervalMs,
      signal: io.signal,
    })) {
      io.stdout.write(opts.json ? JSON.stringify(row) + '\n' : formatLogRow(row));
    }
  } catch (err) {
    if (io.signal?.aborted) return 0; // Ctrl-C ends a tail normally
    throw err;
  }
  return 0;
}
