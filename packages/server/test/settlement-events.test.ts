/**
 * Settlement events belong to the application context (issue 14): what follows a settled job
 * (object deletion, webhook journal, the stream hub) listens on `ctx.settlements`, so two apps in
 * one process never see each other's jobs; a listener that fails is reported, never swallowed, and
 * neither un-settles the job nor stops the listeners after it.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { settleJob } from '../src/domain/jobs.js';
import { SettlementEvents } from '../src/domain/settlement-events.js';
import { getJob, type JobRow } from '../src/store/jobs.js';
import { createBatchWorld, mintSession, type BatchWorld } from './batch-world.js';

let a: BatchWorld;
let b: BatchWorld;
beforeAll(async () => {
  [a, b] = await Promise.all([createBatchWorld(), createBatchWorld()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const failed = { status: 'failed', code: 'internal_error', message: 'test' } as const;

test('a job settled in one app is heard by that app only', async () => {
  const heardA: string[] = [];
  const heardB: string[] = [];
  const offA = a.ctx.settlements.on('test', (job) => void heardA.push(job.id));
  const offB = b.ctx.settlements.on('test', (job) => void heardB.push(job.id));
  try {
    const { sessionId } = await mintSession(b);
    expect(await settleJob(b.ctx, sessionId, failed)).toBe(true);
    expect(heardB).toEqual([sessionId]);
    expect(heardA).toEqual([]);
    expect(await settleJob(b.ctx, sessionId, failed)).toBe(false); // settled once, heard once
    expect(heardB).toEqual([sessionId]);
  } finally {
    offA();
    offB();
  }
});

test('a failing listener is reported with its name and the job, and the job stays settled', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.message);
  process.on('warning', onWarning);
  const after: string[] = [];
  const offFail = a.ctx.settlements.on('explodes', () => {
    throw new Error('boom');
  });
  const offAfter = a.ctx.settlements.on('runs after', (job) => void after.push(job.id));
  try {
    const { sessionId } = await mintSession(a);
    expect(await settleJob(a.ctx, sessionId, failed)).toBe(true);
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    expect(warnings).toContainEqual(
      expect.stringContaining(`after settling job ${sessionId}, "explodes" failed: boom`),
    );
    expect(after).toEqual([sessionId]);
    expect((await getJob(a.ctx.db.db, sessionId))!.status).toBe('failed');
  } finally {
    process.off('warning', onWarning);
    offFail();
    offAfter();
  }
});

test('SettlementEvents: listeners in order, removable, failures to the injected reporter', async () => {
  const reported: Array<[string, unknown]> = [];
  const events = new SettlementEvents((message, err) => reported.push([message, err]));
  const order: string[] = [];
  events.on('first', () => void order.push('first'));
  const off = events.on('second', async () => {
    order.push('second');
    throw new Error('second failed');
  });
  events.on('third', () => void order.push('third'));
  const job = { id: 'job_1' } as JobRow;
  await events.emit(job);
  expect(order).toEqual(['first', 'second', 'third']);
  expect(reported).toHaveLength(1);
  expect(reported[0][0]).toBe('after settling job job_1, "second" failed');
  expect((reported[0][1] as Error).message).toBe('second failed');
  off();
  await events.emit(job);
  expect(order).toEqual(['first', 'second', 'third', 'first', 'third']);
});

test('a completed job stores its measurement under a time-ordered id (the creation millisecond leads)', async () => {
  const { sessionId } = await mintSession(a);
  const t0 = Date.now();
  const completed = {
    status: 'completed',
    fields: { durationSec: 30, isComplete: true, quality: { level: 'poor', score: 0.1, usable: false } },
    framesProcessed: 900,
    secondsProcessed: 30,
  } as const;
  expect(await settleJob(a.ctx, sessionId, completed)).toBe(true);
  const id = (await getJob(a.ctx.db.db, sessionId))!.measurement_id!;
  expect(id).toMatch(/^meas_[0-9a-f]{24}$/);
  const ms = parseInt(id.slice(5, 17), 16);
  expect(ms).toBeGreaterThanOrEqual(t0);
  expect(ms).toBeLessThanOrEqual(Date.now());
});
