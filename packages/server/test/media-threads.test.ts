/**
 * The estimator thread (src/batch/media-threads.ts; issue 18 target 0): a large frames file's
 * decoding and estimate, and a long live session's final analysis run on a worker thread and give
 * exactly what the main thread computes; a video job is estimated where its face was followed and
 * gives what the offline estimator gives over all its packets; a job's emotion and gaze analysis
 * split across the video workers gives what one analyzer gives. Real threads, started from the
 * TypeScript sources as in production from dist.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { createAuxAnalyzer, resolveFfmpeg, videoToPackets } from '@vitals/media';
import { estimateOffline, generatePhantom, StreamingEstimator, analyzeTrace } from '@vitals/engine';
import { encodeFramesFile } from '@vitals/protocol';
import {
  AUX_MIN_PER_WORKER,
  createMediaThreads,
  type MediaThreads,
  THREAD_MIN_CROPS,
  THREAD_MIN_FRAMES_BYTES,
} from '../src/batch/media-threads.js';
import { checkFramesFile } from '../src/batch/frames.js';
import { videoCaptureSource } from '../src/domain/measurement-fields.js';
import { encodePacket, ubfcVideo, videoCut } from './batch-world.js';

const threads = createMediaThreads(1);
afterAll(() => threads.close());
const signal = new AbortController().signal;

// 100 s at 30 fps: past the thread thresholds (2,700 crops; a frames file over 8 MB).
const { packets } = generatePhantom({ durationSec: 100, fps: 30, heartRateBpm: 66, telemetry: true, seed: 11 });

describe('estimator thread', () => {
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
    expect(live.finishInput().trace.n).toBeGreaterThan(THREAD_MIN_CROPS);
    const m = await threads.analyzeTrace(live.finishInput());
    expect(threads.stats().estimator).toMatchObject({ workers: 1 });
    expect(m).toEqual(expected);
    expect(m).toEqual(analyzeTrace(live.finishInput().trace, {}));
  }, 60_000);
});

/** Threads of their own and a temp dir for one describe block, both gone after it. */
function threadsAndDir(n: number, prefix: string): { threads: MediaThreads; dir: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const own = createMediaThreads(n);
  afterAll(async () => {
    await own.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { threads: own, dir };
}

const FACE_VIDEO = ubfcVideo('subject3');

describe.skipIf(!FACE_VIDEO)('a job emotion and gaze analysis split across the video workers', () => {
  const { threads: two, dir } = threadsAndDir(2, 'vitals-aux-split-');

  test('gives the analyses of one analyzer series, in order (parts start at group boundaries)', async () => {
    // 40 aux-sized face JPEGs, one every 1.5 s of a real recording (as a job's, 448x448).
    const n = 2 * AUX_MIN_PER_WORKER + 8;
    execFileSync(resolveFfmpeg().ffmpeg, [
      ...['-v', 'error', '-y', '-i', FACE_VIDEO!, '-frames:v', String(n)],
      ...['-vf', 'fps=2/3,crop=300:300:170:60,scale=448:448', '-q:v', '4', path.join(dir, 'a%03d.jpg')],
    ]);
    const images = Array.from(
      { length: n },
      (_, i) => new Uint8Array(readFileSync(path.join(dir, `a${String(i + 1).padStart(3, '0')}.jpg`))),
    );
    const series = (await createAuxAnalyzer()).series!();
    const inline = [];
    for (const img of images) inline.push(await series.analyze(img));
    expect(inline.filter((a) => a.emotion).length).toBeGreaterThan(n / 2); // faces were found
    const threaded = await two.auxAnalyses(images, signal);
    expect(threaded).toEqual(inline);
    // Both workers took part (each analysed its share).
    expect(two.stats().video).toMatchObject({ workers: 2 });
  }, 180_000);
});

const SUBJECT5 = ubfcVideo('subject5');

describe.skipIf(!SUBJECT5)('a video job: followed and estimated in one place, its crops never kept', () => {
  const { threads: none, dir } = threadsAndDir(0, 'vitals-video-consumer-');

  test('on a video worker and on the main thread: the measurement of every packet, without the crops', async () => {
    const file = path.join(dir, 'subject5-25s.mp4');
    writeFileSync(file, await videoCut(SUBJECT5!, 25));
    // The reference: every packet kept, then the offline estimator, as a job did before.
    const ref = await videoToPackets(file, { aux: true });
    if (!ref.ok) throw new Error(ref.message);
    const expected = estimateOffline(ref.packets, { source: videoCaptureSource(ref.stats) });
    expect(expected.cardiac.heartRate).not.toBeNull(); // a real pulse, so the comparison means something
    const rest = ref.packets.filter((p) => p.type !== 1);
    expect(rest.some((p) => p.type === 4)).toBe(true); // the aux chunks stay with the job
    for (const [where, t] of [
      ['a video worker', threads],
      ['the main thread', none],
    ] as const) {
      const stages: string[] = [];
      const got = await t.video(
        file,
        { aux: true, onProgress: (_f, stage) => stages.push(stage ?? `decoding`) },
        signal,
      );
      if (!got.ok) throw new Error(`${where}: ${got.message}`);
      // The estimate is a stage of its own after the video was followed (a job's progress says so).
      expect({ where, last: stages.slice(-2) }).toEqual({ where, last: ['decoding', 'estimating'] });
      expect({ where, measurement: got.measurement }).toEqual({ where, measurement: expected });
      expect({ where, stats: got.stats }).toEqual({ where, stats: ref.stats });
      expect({ where, packets: got.packets }).toEqual({ where, packets: rest });
    }
    expect(threads.stats().video).toMatchObject({ workers: 1 });
  }, 240_000);
});
