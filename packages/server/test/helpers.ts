/**
 * Server test support: the one harness (`createWorld`, src/testing.ts) with a `test` that gives each
 * test a fresh world, and request bodies. Every test owns its world: its own app and database, its
 * own organization and key, and a ManualClock it moves by hand (STYLE habit 10).
 */
import { test as base } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { createWorld as createWorldAt, type ManualClock, type World, type WorldOptions } from '../src/testing.js';

export { signedInject, waitFor, type Body, type SignedInjectOptions, type World } from '../src/testing.js';

/** The fixed start of a world's ManualClock, unless a test says otherwise. */
export const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

/** A world (src/testing.ts, `createWorld`) whose clock starts at T0 unless `now` or `clock` is given. */
export const createWorld = (opts: Omit<WorldOptions, 'clock'> & { clock?: ManualClock } = {}): Promise<World> =>
  createWorldAt<ManualClock>({ now: T0, ...opts });

/** `test` with a fresh world per test: `test('...', async ({ world }) => ...)`. */
export const test = base.extend<{ world: World }>({
  // eslint-disable-next-line no-empty-pattern
  world: async ({}, use) => {
    const w = await createWorld();
    await use(w);
    await w.close();
  },
});

export const json = (res: LightMyRequestResponse): any => JSON.parse(res.body);

/** How many measurements the world's store holds (every key). */
export const countMeasurements = async (w: World): Promise<number> =>
  Number(
    (
      await w.t.ctx.db.db
        .selectFrom('measurements')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A complete good-quality on-device measurement body. */
export function goodMeasurement(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: 'web',
    durationSec: 60,
    isComplete: true,
    quality: { level: 'good', score: 0.9, usable: true },
    cardiac: { heartRate: { value: 72, unit: 'bpm', confidence: 0.9 } },
    hrv: { sdnnMs: 50, rmssdMs: 40, pnn50Pct: 20 },
    respiratory: { breathingRate: { value: 14, unit: 'brpm' } },
    stress: { index: 120, level: 'low', unit: 'index' },
    bloodPressure: { systolicMmHg: 118, diastolicMmHg: 76, unit: 'mmHg', confidence: 0.6, tier: 'beta' },
    spo2: { value: 98, unit: '%', confidence: 0.7, tier: 'beta' },
    ...over,
  };
}

export function poorMeasurement(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    source: 'web',
    durationSec: 60,
    isComplete: false,
    quality: { level: 'poor', score: 0.1, usable: false },
    cardiac: { heartRate: null },
    hrv: null,
    respiratory: { breathingRate: null },
    stress: null,
    bloodPressure: null,
    spo2: null,
    ...over,
  };
}
