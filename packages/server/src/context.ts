/**
 * The application context: every port the routes use, chosen once (STYLE habit 4) and passed down.
 */
import type { Config } from './config.js';
import type { Clock } from './clock.js';
import type { DbHandle } from './store/db.js';
import type { KeyRecord } from './store/orgs-keys.js';
import type { SettlementEvents } from './domain/settlement-events.js';
import { getKey } from './store/orgs-keys.js';
import type { PaymentProvider } from './console/payments.js';
import type { ModelBundle } from './models/bundle.js';

export interface AppContext {
  config: Config;
  clock: Clock;
  db: DbHandle;
  keys: KeyCache;
  /** Signs session tokens and upload URLs (store/settings.ts). */
  serverSecret: string;
  /**
   * Base address advertised in `uploadUrl` and `wsUrl`: VITALS_PUBLIC_URL, else the listening
   * address once known.
   */
  publicUrl?: string;
  /** Listeners run once a job of this context reaches a terminal status (domain/jobs.ts settleJob). */
  settlements: SettlementEvents;
  /** The console's payment provider (deps.ts; console/payments.ts). */
  payments?: PaymentProvider;
  /** The browser's model bundle (models/bundle.ts), read once per process on first use. */
  modelBundle: () => Promise<ModelBundle>;
  /** Background work the process must finish or stop on close (timers, workers, sockets). */
  onClose: Array<() => Promise<void> | void>;
}

/**
 * Key lookups cached for at most one second: operator changes (disabling a key) take effect for the
 * next request after that (CLARIFICATIONS 9).
 */
export class KeyCache {
  private cache = new Map<string, { at: number; key: KeyRecord | undefined }>();
  constructor(
    private readonly db: DbHandle,
    private readonly ttlMs = 1000,
  ) {}

  async get(id: string): Promise<KeyRecord | undefined> {
    if (id.length > 128) return undefined;
    const hit = this.cache.get(id);
    // Only real time bounds the cache, so an injected clock that jumps never serves a stale key.
    if (hit && Math.abs(Date.now() - hit.at) < this.ttlMs) return hit.key;
    const key = await getKey(this.db.db, id);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(id, { at: Date.now(), key });
    return key;
  }

  invalidate(id?: string): void {
    if (id) this.cache.delete(id);
    else this.cache.clear();
  }
}
