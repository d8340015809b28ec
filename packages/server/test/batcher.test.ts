/**
 * The batcher's bounds (store/batcher.ts): while the database does not answer, batches stay in flight
 * and items queue; past `maxQueued` waiting items an item is refused at once with StoreBusyError
 * (answered 503), as is one that waited `maxWaitMs`, and everything else still settles once the
 * database answers again.
 */
import { describe, expect, test } from 'vitest';
import { Batcher, DEFAULT_MAX_QUEUED, type Outcome } from '../src/store/batcher.js';
import { StoreBusyError, isStoreUnavailable } from '../src/store/unavailable.js';

/** A `run` that never settles until `open()`: a database that stalls. */
function stalled() {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const batches: number[][] = [];
  const run = async (items: number[]): Promise<Array<Outcome<number>>> => {
    batches.push(items);
    await gate;
    return items.map((i) => ({ ok: true, value: i * 10 }));
  };
  return { run, batches, open };
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Resolves to 'pending' if `p` has not settled within a few turns of the event loop. */
async function state(p: Promise<unknown>): Promise<'resolved' | 'rejected' | 'pending'> {
  const s = p.then(
    () => 'resolved' as const,
    () => 'rejected' as const,
  );
  return Promise.race([
    s,
    turn()
      .then(turn)
      .then(() => 'pending' as const),
  ]);
}

describe('Batcher maxQueued', () => {
  const opts = { maxBatch: 3, maxInFlight: 2, maxQueued: 5 };
  const capacity = opts.maxQueued + opts.maxInFlight * opts.maxBatch; // 11

  test('added together: maxQueued + maxInFlight * maxBatch are held, the next is refused at once; the held ones settle after release', async () => {
    const db = stalled();
    const b = new Batcher<number, number>(db.run, opts);
    const held = Array.from({ length: capacity }, (_, i) => b.add(i));
    const overflow = b.add(capacity);
    await expect(overflow).rejects.toBeInstanceOf(StoreBusyError);
    expect(isStoreUnavailable(await overflow.catch((e: unknown) => e))).toBe(true);
    // The batches went out (two in flight, three items each); the rest wait, nothing settled yet.
    await turn();
    expect(db.batches).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    for (const p of held) expect(await state(p)).toBe('pending');
    // Still full while the database stalls.
    await expect(b.add(99)).rejects.toBeInstanceOf(StoreBusyError);
    db.open();
    expect(await Promise.all(held)).toEqual(Array.from({ length: capacity }, (_, i) => i * 10));
    await b.drain();
    // Room again.
    expect(await b.add(7)).toBe(70);
  });

  test('added while the batches are in flight: exactly maxQueued more wait', async () => {
    const db = stalled();
    const b = new Batcher<number, number>(db.run, opts);
    const inFlight = Array.from({ length: opts.maxInFlight * opts.maxBatch }, (_, i) => b.add(i));
    await turn();
    expect(db.batches).toHaveLength(2);
    const queued = Array.from({ length: opts.maxQueued }, (_, i) => b.add(100 + i));
    const refused = b.add(200);
    expect(await state(refused)).toBe('rejected');
    await expect(refused).rejects.toThrow(/too many writes/);
    for (const p of queued) expect(await state(p)).toBe('pending');
    db.open();
    expect(await Promise.all([...inFlight, ...queued])).toHaveLength(capacity);
  });

  test('an item refused leaves the batcher as it was: drain still settles', async () => {
    const db = stalled();
    const b = new Batcher<number, number>(db.run, { ...opts, maxQueued: 0 });
    const sent = Array.from({ length: 6 }, (_, i) => b.add(i));
    await expect(b.add(6)).rejects.toBeInstanceOf(StoreBusyError);
    const drained = b.drain();
    expect(await state(drained)).toBe('pending');
    db.open();
    await drained;
    expect(await Promise.all(sent)).toHaveLength(6);
  });

  test('maxWaitMs: an item still waiting for a batch after that long is refused; the ones in flight still settle', async () => {
    const db = stalled();
    const b = new Batcher<number, number>(db.run, { maxBatch: 2, maxInFlight: 1, maxWaitMs: 80 });
    const started = performance.now();
    const inFlight = [b.add(1), b.add(2)];
    await turn();
    const waiting = [b.add(3), b.add(4)];
    await expect(waiting[0]).rejects.toBeInstanceOf(StoreBusyError);
    await expect(waiting[1]).rejects.toBeInstanceOf(StoreBusyError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(75);
    expect(performance.now() - started).toBeLessThan(1000);
    for (const p of inFlight) expect(await state(p)).toBe('pending');
    // A later item gets its own full wait, and goes out when the stall ends.
    const late = b.add(5);
    db.open();
    expect(await Promise.all([...inFlight, late])).toEqual([10, 20, 50]);
    await b.drain();
  });

  test('default bound', async () => {
    expect(DEFAULT_MAX_QUEUED).toBe(4096);
    const db = stalled();
    const b = new Batcher<number, number>(db.run, { maxBatch: 1, maxInFlight: 1 });
    const held = Array.from({ length: DEFAULT_MAX_QUEUED + 1 }, (_, i) => b.add(i));
    await expect(b.add(-1)).rejects.toBeInstanceOf(StoreBusyError);
    db.open();
    expect(await Promise.all(held)).toHaveLength(DEFAULT_MAX_QUEUED + 1);
  });
});
