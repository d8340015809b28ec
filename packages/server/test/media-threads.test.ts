/**
 * The estimator thread (src/batch/media-threads.ts; issue 18 target 0): a long capture's offline
 * estimate, a large frames file's decoding and estimate, and a live session's final analysis run
 * on a worker thread and give exactly what the main thread computes. Real threads, started from
 * the TypeScript sources as in production from dist.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { estimateOffline, generatePhantom, StreamingEstimator, analyzeTrace } from '@vitals/engine';
import { encodeFramesFile } from '@vitals/protocol';
import { createMediaThreads, THREAD_MIN_CROPS, THREAD_MIN_FRAMES_BYTES } from '../src/batch/media-threads.js';
import { checkFramesFile } from '../src/batch/frames.js';
import { encodePacket } from './batch-world.js';

const threads = createMediaThreads(1);
afterAll(() => threads.close());
const signal = new AbortController().signal;

// 100 s at 30 fps: past the thread thresholds (2,700 crops; a frames file over 8 MB).
const { packets } = generatePhantom({ durationSec: 100, fps: 30, heartRateBpm: 66, telemetry: true, seed: 11 });

describe('estimator thread', () => {
  test('a long capture: the thread gives the main thread estimate', async () => {
    expect(packets.filter((p) => p.type === 1).length).toBeGreaterThan(THREAD_MIN_CROPS);
    const m = await threads.estimate(packets, signal);
    expect(threads.stats().estimator).toMatchObject({ workers: 1 });
    expect(m).toEqual(estimateOffline(packets));
    expect(m.cardiac.heartRate?.value).toBeCloseTo(66, -1);
  }, 60_000);

  test('a large frames file: checked, decoded and estimated on the thread', async () => {
    const file = encodeFramesFile(packets.flatMap(encodePacket), 100e6);
    expect(file.byteLength).toBeGreaterThan(THREAD_MIN_FRAMES_BYTES);
    const inline = checkFramesFile(file);
    if (!inline.ok) throw new Error(inline.message);
    const out = await threads.frames(file.slice(), false, signal);
    expect(out.check).toEqual({ ok: true, durationMicros: inline.durationMicros });
    expect(out.measurement).toEqual(estimateOffline(inline.packets));
  }, 60_000);

  test('a long live session: the final analysis on the thread equals the estimator finish()', async () => {
    const live = new StreamingEstimator();
    for (const p of packets) live.push(p);
    const expected = live.finish();
    const m = await threads.analyzeTrace(live.finishInput());
    expect(m).toEqual(expected);
    expect(m).toEqual(analyzeTrace(live.finishInput().trace, {}));
  }, 60_000);
});
