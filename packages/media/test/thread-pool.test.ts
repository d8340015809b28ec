/**
 * The worker-thread pool under the video pool (src/pool/thread-pool.ts; docs/media.md, "Worker
 * threads"): real worker threads on a fixture entry started from its TypeScript source the way the
 * server's run in tests. Parallel up to its size, reused, bounded queue, abort (cooperative, and by
 * terminating a worker stuck in synchronous work), a crashed worker rejected and replaced.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createThreadPool, PoolQueueFullError, type ThreadPool } from '../src/pool/index.js';
import type { Op } from './fixtures/pool-worker.js';

type Out = { value?: number; threadId: number; start?: number; end?: number };
let pool: ThreadPool<Op, Out> | undefined;
afterEach(async () => pool?.close());

const make = (size: number, extra: { maxQueued?: number; abortGraceMs?: number } = {}): ThreadPool<Op, Out> =>
  (pool = createThreadPool<Op, Out>({
    entry: new URL('./fixtures/pool-worker.ts', import.meta.url),
    size,
    name: 'test',
    ...extra,
  }));

describe('thread pool', () => {
  it('runs tasks on up to `size` workers at once and reuses them', async () => {
    const p = make(2);
    const progress: [number, string | undefined][] = [];
    const first = await p.run({ op: 'echo', value: 7 }, { onProgress: (f, stage) => progress.push([f, stage]) });
    expect(first.value).toBe(7);
    // In order, a later stage named as the worker named it.
    expect(progress).toEqual([
      [0.5, undefined],
      [1, 'finishing'],
    ]);
    const both = await Promise.all([p.run({ op: 'wait', ms: 1500 }), p.run({ op: 'wait', ms: 1500 })]);
    // The two waits overlapped (each started before the other ended), on two threads.
    expect(both[0].start!).toBeLessThan(both[1].end!);
    expect(both[1].start!).toBeLessThan(both[0].end!);
    expect(new Set(both.map((o) => o.threadId)).size).toBe(2);
    expect(both.map((o) => o.threadId)).toContain(first.threadId);
    expect(p.stats()).toEqual({ workers: 2, busy: 0, queued: 0 });
  }, 30_000);

  it('queues beyond its size, and refuses beyond the queue bound', async () => {
    const p = make(1, { maxQueued: 1 });
    const a = p.run({ op: 'wait', ms: 200 });
    const b = p.run({ op: 'echo', value: 2 });
    await expect(p.run({ op: 'echo', value: 3 })).rejects.toBeInstanceOf(PoolQueueFullError);
    expect(p.stats()).toMatchObject({ busy: 1, queued: 1 });
    await a;
    expect((await b).value).toBe(2);
  }, 30_000);

  it('aborts a waiting and a running task with the signal reason; the worker serves the next', async () => {
    const p = make(1);
    const ac = new AbortController();
    const reason = new Error('stop now');
    const running = expect(p.run({ op: 'wait', ms: 60_000 }, { signal: ac.signal })).rejects.toBe(reason);
    const queued = expect(p.run({ op: 'wait', ms: 60_000 }, { signal: ac.signal })).rejects.toBe(reason);
    await new Promise((r) => setTimeout(r, 100));
    ac.abort(reason);
    await running;
    await queued;
    expect((await p.run({ op: 'echo', value: 1 })).value).toBe(1);
  }, 30_000);

  it('terminates a worker stuck in synchronous work after the grace period, and replaces it', async () => {
    const p = make(1, { abortGraceMs: 200 });
    const ac = new AbortController();
    const stuck = p.run({ op: 'spin' }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 300));
    ac.abort(new Error('enough'));
    await expect(stuck).rejects.toThrow('enough');
    expect((await p.run({ op: 'echo', value: 5 })).value).toBe(5);
  }, 30_000);

  it('rejects the task of a worker that dies, as an error naming the pool, and replaces the worker', async () => {
    const p = make(1);
    await expect(p.run({ op: 'crash' })).rejects.toThrow(/test worker stopped .*worker blew up/);
    expect((await p.run({ op: 'echo', value: 9 })).value).toBe(9);
  }, 30_000);

  it('rejects queued tasks and refuses new ones once closed', async () => {
    const p = make(1);
    const running = expect(p.run({ op: 'wait', ms: 60_000 })).rejects.toThrow(/stopped/);
    const queued = expect(p.run({ op: 'echo', value: 1 })).rejects.toThrow(/closed/);
    await new Promise((r) => setTimeout(r, 100));
    await p.close();
    await queued;
    await running;
    await expect(p.run({ op: 'echo', value: 1 })).rejects.toThrow(/closed/);
  }, 30_000);
});
