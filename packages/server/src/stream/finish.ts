/**
 * Storing the final measurement through a store outage (store/unavailable.ts: SQLITE_BUSY,
 * PostgreSQL away or timing out): the store is given STORE_RETRY_MS to come back before the
 * session ends in `internal_error` (the streaming vocabulary has nothing closer). The measurement is
 * computed once and would otherwise be lost to a blip of a second. The client keeps waiting for
 * `final`; a client that closes meanwhile still has the measurement stored (GET the job or the
 * measurement). The session (session.ts) decides the rest of `finish`.
 */
import { isStoreUnavailable } from '../store/unavailable.js';

/** Waits between attempts to store the final measurement while the store is unavailable (7.75 s in all). */
export const STORE_RETRY_MS = [250, 500, 1000, 2000, 4000];

export async function withStoreRetries<T>(
  attempt: () => Promise<T>,
  opts: {
    /** False once the session was closed meanwhile (shutdown settles it itself). */
    stillFinishing(): boolean;
    onRetry(err: unknown, retryInMs: number): void;
  },
): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      // Past the last wait the outage is not a blip.
      if (!isStoreUnavailable(err) || i >= STORE_RETRY_MS.length || !opts.stillFinishing()) throw err;
      opts.onRetry(err, STORE_RETRY_MS[i]);
      await new Promise((r) => setTimeout(r, STORE_RETRY_MS[i]));
    }
  }
}
