/**
 * Live emotion and gaze off the event loop (docs/streaming.md, "Emotion and gaze"): with media
 * threads (the default) a live session's aux frames are analysed on a worker thread of their own,
 * the process's `liveAux` pool, with the same models and the same answer as the main-thread
 * analyzer; with `VITALS_MEDIA_THREADS=0` the main thread analyses them, as before. A real face
 * JPEG from a UBFC-rPPG recording (made with ffmpeg in a temp dir); skipped without the data.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeAuxChunks } from '@vitals/protocol';
import { createAuxAnalyzer, resolveFfmpeg, type AuxAnalysis } from '@vitals/media';
import { TestClient, createSession, crop, startTestServer } from './stream-helpers.js';
import { createMediaThreads } from '../src/batch/media-threads.js';

const REPO = new URL('../../../', import.meta.url).pathname;
const VIDEO = [path.resolve(REPO, '../shared/data'), path.resolve(REPO, '../../shared/data')]
  .map((d) => path.join(d, 'ubfc2/subject3/vid.mp4'))
  .find((f) => existsSync(f));

/** The client's `i`-th event of type `t` (0 the first), waited for. */
async function nth(c: TestClient, t: string, i: number, timeoutMs = 60_000): Promise<unknown> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const seen = c.events.filter((e) => e.t === t);
    if (seen.length > i) return seen[i];
    if (Date.now() > until) throw new Error(`no "${t}" #${i} within ${timeoutMs} ms; got ${JSON.stringify(c.events)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!VIDEO)('live emotion and gaze', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vitals-live-aux-'));
  let jpegs: Uint8Array[];
  let expected: AuxAnalysis[];
  beforeAll(async () => {
    // Three 448x448 face crops at about quality 80, a tenth of a second apart, as the capture's aux frames are.
    jpegs = [2, 2.1, 2.2].map((sec, i) => {
      const out = path.join(dir, `face${i}.jpg`);
      execFileSync(resolveFfmpeg().ffmpeg, [
        ...['-v', 'error', '-y', '-ss', String(sec), '-i', VIDEO!, '-frames:v', '1'],
        ...['-vf', 'crop=300:300:170:60,scale=448:448', '-q:v', '4', out],
      ]);
      return new Uint8Array(readFileSync(out));
    });
    // A session's aux frames are one series: the first a full detection, the next from its box.
    const analyzer = await createAuxAnalyzer();
    const series = analyzer.series!();
    expected = [];
    for (const j of jpegs) expected.push(await series.analyze(j));
    // The second was analysed from the first one's box: not what a full detection of it gives.
    expect(expected[1]).not.toEqual(await analyzer.analyze(jpegs[1]));
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The aux frames through a live session, one after the other's events; its events and the pools started. */
  async function session(env: Record<string, string>) {
    const srv = await startTestServer({ env });
    try {
      const key = await srv.createKey();
      const s = await createSession(srv, key, { features: ['emotion', 'gaze'] });
      const { c, ready } = await TestClient.ready(s.wsUrl, s.sessionToken);
      expect(ready.acceptedFeatures).toEqual(['emotion', 'gaze']);
      const emotion: unknown[] = [];
      const gaze: unknown[] = [];
      for (const [i, jpeg] of jpegs.entries()) {
        c.bin(crop(i, i * 500_000));
        for (const ch of encodeAuxChunks({ tMicros: i * 500_000, jpeg })) c.bin(ch);
        emotion.push(await nth(c, 'emotion', i));
        gaze.push(await nth(c, 'gaze', i));
      }
      c.close();
      return { emotion, gaze, pools: srv.ctx.batch!.threads.stats() };
    } finally {
      await srv.close();
    }
  }

  const events = (kind: 'emotion' | 'gaze') =>
    expected.map((e, i) =>
      kind === 'emotion'
        ? { t: 'emotion', probs: e.emotion, tMs: i * 500 }
        : { t: 'gaze', yaw: e.gaze!.yaw, pitch: e.gaze!.pitch, tMs: i * 500 },
    );

  test('with media threads, a worker of its own analyses them: the main-thread series', async () => {
    expect(expected.every((e) => e.emotion?.length === 8 && e.gaze)).toBe(true);
    const { emotion, gaze, pools } = await session({ VITALS_MEDIA_THREADS: '2' });
    expect(emotion).toEqual(events('emotion'));
    expect(gaze).toEqual(events('gaze'));
    expect(pools.liveAux).toMatchObject({ workers: 1 });
    expect(pools.video).toBeUndefined(); // not a video worker: no video job waits behind it, nor it behind one
  }, 120_000);

  test('sessions analysed at once: another live worker starts, up to the media threads, same answers', async () => {
    const threads = createMediaThreads(2);
    try {
      const analyzer = await threads.liveAux()!;
      expect(threads.stats().liveAux).toMatchObject({ workers: 1 }); // the first, for the models' availability
      // Two sessions' series, their frames in flight together: the one worker is busy, a second starts.
      const series = [analyzer.series!(), analyzer.series!()];
      const got = await Promise.all(series.map(async (s) => [await s.analyze(jpegs[0]), await s.analyze(jpegs[1])]));
      expect(got).toEqual([expected.slice(0, 2), expected.slice(0, 2)]);
      expect(threads.stats().liveAux).toMatchObject({ workers: 2 });
    } finally {
      await threads.close();
    }
  }, 120_000);

  test('with VITALS_MEDIA_THREADS=0, the main thread analyses them', async () => {
    const { emotion, pools } = await session({ VITALS_MEDIA_THREADS: '0' });
    expect(emotion).toEqual(events('emotion'));
    expect(pools.liveAux).toBeUndefined();
  }, 120_000);
});
