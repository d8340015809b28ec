/**
 * A video job's emotion and gaze analysed while its face is still followed (src/batch/aux-pipeline.ts;
 * docs/media.md, "Worker threads"): the parts go to the video pool as the worker hands the images
 * out, and the stored measurement is byte for byte the one of the main-thread path, which analyses
 * every image after the video. The pipeline alone: its parts start before `finish`, its answer is
 * one analyzer's, and images that differ from the packets' are analysed again from the packets.
 * Real UBFC-rPPG recordings (a 21 s cut made with ffmpeg, cached in the OS temp dir); skipped
 * without the data.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AUX_GROUP, createAuxAnalyzer, resolveFfmpeg, type AuxAnalysis } from '@vitals/media';
import { createJob, json, systemClock, ubfcVideo, videoCut, waitFor, type BatchWorld } from './batch-world.js';
import { createWorld } from '../src/testing.js';
import { AUX_PARTS_IN_FLIGHT, AuxPipeline } from '../src/batch/aux-pipeline.js';
import type { MediaThreads } from '../src/batch/media-threads.js';
import { AUX_MIN_PER_WORKER, createMediaThreads } from '../src/batch/media-threads.js';

const VIDEO = ubfcVideo('subject3');

/** The measurement as stored, without what names this job or this moment. */
function stored(m: Record<string, unknown>): string {
  const volatile = new Set(['id', 'keyId', 'requestId', 'createdAt']);
  return JSON.stringify(m, (k, v) => (volatile.has(k) ? undefined : v));
}

describe.skipIf(!VIDEO)('aux pipeline', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vitals-aux-pipeline-'));
  const signal = new AbortController().signal;
  let images: Uint8Array[];
  let inline: AuxAnalysis[];
  beforeAll(async () => {
    // 40 aux-sized face JPEGs, one every 1.5 s of a real recording (448x448, as a job's).
    const n = 40;
    execFileSync(resolveFfmpeg().ffmpeg, [
      ...['-v', 'error', '-y', '-i', VIDEO!, '-frames:v', String(n)],
      ...['-vf', 'fps=2/3,crop=300:300:170:60,scale=448:448', '-q:v', '4', path.join(dir, 'a%03d.jpg')],
    ]);
    images = Array.from(
      { length: n },
      (_, i) => new Uint8Array(readFileSync(path.join(dir, `a${String(i + 1).padStart(3, '0')}.jpg`))),
    );
    // One series over the capture's images (groups of AUX_GROUP), as the main-thread path analyses them.
    const series = (await createAuxAnalyzer()).series!();
    inline = [];
    for (const img of images) inline.push(await series.analyze(img));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('parts start as images arrive; the answer is one analyzer, in order', async () => {
    const threads = createMediaThreads(2);
    try {
      const p = new AuxPipeline(threads, signal);
      for (let i = 0; i < AUX_MIN_PER_WORKER; i++) p.add(images[i]);
      // A part is under way before the video (here: the adds) is over. The pool starts on first use
      // (a dynamic import, slow on a loaded machine), and the part keeps a worker busy for about
      // a second (16 analyses, the models' load first), so it is seen under way.
      await expect
        .poll(
          () => {
            const s = threads.stats().video;
            return s ? s.busy + s.queued : 0;
          },
          { timeout: 30_000, interval: 20 },
        )
        .toBeGreaterThan(0);
      for (let i = AUX_MIN_PER_WORKER; i < images.length; i++) p.add(images[i]);
      expect(await p.finish(images)).toEqual(inline);
    } finally {
      await threads.close();
    }
  }, 120_000);

  test('images that differ from the packets are analysed again from the packets', async () => {
    const threads = createMediaThreads(2);
    try {
      const p = new AuxPipeline(threads, signal);
      for (const img of images.slice(0, 20)) p.add(img);
      // The packets' images are a capture of their own: one series from their first.
      const series = (await createAuxAnalyzer()).series!();
      const expected: AuxAnalysis[] = [];
      for (const img of images.slice(20)) expected.push(await series.analyze(img));
      expect(await p.finish(images.slice(20))).toEqual(expected);
    } finally {
      await threads.close();
    }
  }, 120_000);

  test('split across two workers at group boundaries: the analyses of one series', async () => {
    const threads = createMediaThreads(2);
    try {
      // 40 images on 2 workers: parts of 24 and 16 (multiples of AUX_GROUP), run at once.
      expect(await threads.auxAnalyses(images, signal)).toEqual(inline);
      expect(threads.stats().video).toMatchObject({ workers: 2 });
    } finally {
      await threads.close();
    }
  }, 120_000);

  test('a video job: the same stored emotion and gaze as the main-thread path', async () => {
    const clip = await videoCut(VIDEO!, 21);
    const run = async (threads: string): Promise<{ m: Record<string, unknown>; w: BatchWorld }> => {
      const w = await createWorld({
        batch: { embeddedWorker: false, concurrency: 1 },
        env: { VITALS_MEDIA_THREADS: threads },
        clock: systemClock,
      });
      w.rt.auxCapabilities = async () => ({ emotion: true, gaze: true });
      await w.rt.startWorker();
      const j = await createJob(w, clip, { kind: 'video', features: ['emotion', 'gaze'] });
      await waitFor(w, j.jobId, undefined, 280_000);
      const job = json(await w.call({ url: `/sdk/v1/cloud/jobs/${j.jobId}` })).data;
      expect(job.status).toBe('completed');
      return { m: job.measurement, w };
    };
    const piped = await run('2');
    const stats = piped.w.rt.threads.stats().video;
    await piped.w.close();
    const main = await run('0');
    await main.w.close();
    expect((piped.m.emotion as { samples: number }).samples).toBeGreaterThan(20);
    expect(stored(piped.m)).toBe(stored(main.m));
    expect(stats).toMatchObject({ workers: 2 }); // the video's worker and one analysing parts
  }, 300_000);
});

describe('aux pipeline: parts in flight', () => {
  /** A pool whose analyses answer after a few milliseconds: image i's analysis names i. */
  function slowPool(): { threads: MediaThreads; calls: number[]; maxOut: () => number } {
    let out = 0;
    let max = 0;
    const calls: number[] = [];
    const threads = {
      async auxAnalyses(images: Uint8Array[]) {
        calls.push(images.length);
        max = Math.max(max, ++out);
        await new Promise((r) => setTimeout(r, 5));
        out--;
        return images.map((img) => ({ gaze: { yaw: img[0] + 256 * img[1], pitch: 0 } }));
      },
    } as unknown as MediaThreads;
    return { threads, calls, maxOut: () => max };
  }
  const image = (i: number): Uint8Array => new Uint8Array([i & 255, i >> 8]);

  test('a long video: never more than AUX_PARTS_IN_FLIGHT parts out; every image answered once, in order', async () => {
    const { threads, calls, maxOut } = slowPool();
    const p = new AuxPipeline(threads, new AbortController().signal);
    // An hour at 2 images a second, handed out faster than they are analysed (as a long video's are).
    const images = Array.from({ length: 7200 }, (_, i) => image(i));
    for (let i = 0; i < images.length; i++) {
      p.add(images[i]);
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 1));
    }
    const got = await p.finish(images);
    expect(maxOut()).toBeLessThanOrEqual(AUX_PARTS_IN_FLIGHT + 1); // the parts, then the rest at the end
    expect(got.map((a) => a.gaze!.yaw)).toEqual(images.map((_, i) => i));
    expect(calls.reduce((a, b) => a + b, 0)).toBe(images.length);
    // Whole parts while the video runs; the rest in one call at the end (split there across workers).
    expect(calls.slice(0, -1).every((n) => n === AUX_MIN_PER_WORKER)).toBe(true);
  });

  test('parts start at group boundaries of the aux series: another part size is refused', () => {
    const { threads } = slowPool();
    expect(AUX_MIN_PER_WORKER % AUX_GROUP).toBe(0);
    expect(() => new AuxPipeline(threads, new AbortController().signal, { partSize: AUX_GROUP + 4 })).toThrow(
      RangeError,
    );
  });

  test('a part that ends sends the next one while the video still runs', async () => {
    const { threads, calls } = slowPool();
    const p = new AuxPipeline(threads, new AbortController().signal);
    const images = Array.from({ length: AUX_MIN_PER_WORKER * 4 }, (_, i) => image(i));
    for (const img of images) p.add(img);
    expect(calls.length).toBe(AUX_PARTS_IN_FLIGHT);
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).toEqual([AUX_MIN_PER_WORKER, AUX_MIN_PER_WORKER, AUX_MIN_PER_WORKER, AUX_MIN_PER_WORKER]);
    expect((await p.finish(images)).map((a) => a.gaze!.yaw)).toEqual(images.map((_, i) => i));
    expect(calls.length).toBe(4); // nothing left for the end
  });
});
