/**
 * Local clock against the server's. NCS1 accepts +/- 300 s of skew (spec: Authentication); the
 * SDK and the CLI warn from 30 s on, so a drifting machine is noticed long before it is refused.
 */

/** Epoch milliseconds. Inject one to test or to correct a known offset. */
export type Clock = () => number;

export interface Logger {
  warn(message: string): void;
  debug?(message: string): void;
}

export const DRIFT_WARN_MS = 30_000;

export const consoleLogger: Logger = {
  warn: (message) => console.warn(`[vitals] ${message}`),
};

export const silentLogger: Logger = { warn: () => undefined };

export interface DriftReport {
  /** Server clock minus local clock, milliseconds (positive: the local clock is behind). */
  driftMs: number;
  /** The sample's own uncertainty (half the round trip plus the source's resolution). */
  uncertaintyMs: number;
  exceeded: boolean;
}

/** Keeps the latest drift estimate and warns once per client when it passes the threshold. */
export class ClockWatch {
  private warned = false;
  last: DriftReport | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly thresholdMs = DRIFT_WARN_MS,
  ) {}

  /**
   * Records one observation: `serverMs` read by the server while the request was in flight
   * between `sentAt` and `receivedAt` (local clock). `resolutionMs` is 1000 for the `Date` header.
   */
  observe(serverMs: number, sentAt: number, receivedAt: number, resolutionMs = 0): DriftReport {
    const midpoint = (sentAt + receivedAt) / 2;
    const driftMs = Math.round(serverMs - midpoint);
    const uncertaintyMs = Math.round((receivedAt - sentAt) / 2 + resolutionMs);
    const exceeded = Math.abs(driftMs) - uncertaintyMs > this.thresholdMs;
    const report = { driftMs, uncertaintyMs, exceeded };
    this.last = report;
    if (exceeded && !this.warned) {
      this.warned = true;
      const dir = driftMs > 0 ? 'behind' : 'ahead of';
      this.logger.warn(
        `local clock is ${Math.round(Math.abs(driftMs) / 1000)} s ${dir} the server's; ` +
          'signed requests are refused beyond 300 s: synchronize the clock (NTP)',
      );
    }
    return report;
  }
}

/** Reads a server clock out of an `auth/test` answer; the field name is the server's choice. */
export function serverClockOf(facts: Record<string, unknown>): number | undefined {
  for (const name of ['serverTime', 'serverClock', 'serverTimeMs', 'now', 'time', 'clock']) {
    const v = facts[name];
    const ms = asEpochMs(v);
    if (ms !== undefined) return ms;
    if (v && typeof v === 'object') {
      const inner = v as Record<string, unknown>;
      const nested = asEpochMs(inner.ms ?? inner.epochMs ?? inner.unixMs ?? inner.now);
      if (nested !== undefined) return nested;
    }
  }
  return undefined;
}

function asEpochMs(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v < 1e11 ? v * 1000 : v; // seconds or ms
  if (typeof v === 'string' && v.length > 0) {
    const t = Date.parse(v);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}
