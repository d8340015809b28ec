/**
 * The nonce sweep timer (server.ts): every signature window the server deletes spent nonces whose
 * window has passed, so the table stays the size of one window of traffic; closing the context
 * stops the timer.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SIGNATURE_WINDOW_SEC } from '@vitals/protocol';
import { buildServer } from '../src/server.js';
import { closeContext, createContext } from '../src/deps.js';
import { openTestDatabase, makeKey } from '../src/testing.js';
import { loadConfig } from '../src/config.js';
import { ManualClock } from '../src/clock.js';
import { spendNonce } from '../src/store/nonces.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('nonce sweep timer', () => {
  it('deletes expired nonces once per signature window, keeps live ones, and stops when the context closes', async () => {
    const store = await openTestDatabase();
    const clock = new ManualClock(Date.now());
    const ctx = await createContext(loadConfig({ VITALS_DATA_DIR: store.dataDir }), { clock, db: store.db });
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { app } = await buildServer(ctx);
    const db = store.db.db;
    const nonces = async (): Promise<string[]> =>
      (await db.selectFrom('nonces').select('nonce').orderBy('nonce').execute()).map((r) => r.nonce);
    try {
      const key = await makeKey(ctx);
      const windowMs = SIGNATURE_WINDOW_SEC * 1000;
      expect(await spendNonce(db, key.keyId, 'expires-soon', clock.now(), 1000)).toBe(true);
      expect(await spendNonce(db, key.keyId, 'still-live', clock.now(), 2 * windowMs)).toBe(true);
      clock.advance(5000);
      // Not yet a window: nothing swept.
      vi.advanceTimersByTime(windowMs - 1);
      expect(await nonces()).toEqual(['expires-soon', 'still-live']);
      vi.advanceTimersByTime(1);
      await vi.waitFor(async () => expect(await nonces()).toEqual(['still-live']));
      // Closing the context (what `serve` does on shutdown) stops the timer with every other one.
      await app.close();
      await closeContext(ctx);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      await app.close();
      await closeContext(ctx).catch(() => undefined);
      await store.cleanup();
    }
  });
});
