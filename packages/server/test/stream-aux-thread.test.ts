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

const REPO = new URL('../../../', import.meta.url).pathname;
const VIDEO = [path.resolve(REPO, '../shared/data'), path.resolve(REPO, '../../shared/data')]
  .map((d) => path.join(d, 'ubfc2/subject3/vid.mp4'))
  .find((f) => existsSync(f));

describe.skipIf(!VIDEO)('live emotion and gaze', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vitals-live-aux-'));
  let jpeg: Uint8Array;
  let expected: AuxAnalysis;
  beforeAll(async () => {
    // A 448x448 face crop at about quality 80, as the capture's aux frames are.
    const out = path.join(dir, 'face.jpg');
    execFileSync(resolveFfmpeg().ffmpeg, [
      ...['-v', 'error', '-y', '-ss', '2', '-i', VIDEO!, '-frames:v', '1'],
      ...['-vf', 'crop=300:300:170:60,scale=448:448', '-q:v', '4', out],
    ]);
    jpeg = new Uint8Array(readFileSync(out));
    expected = await (await createAuxAnalyzer()).analyze(jpeg);
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** One aux frame through a live session; the emotion and gaze events and the pools started. */
  async function session(env: Record<string, string>) {
    const srv = await startTestServer({ env });
    try {
      const key = await srv.createKey();
      const s = await createSession(srv, key, { features: ['emotion', 'gaze'] });
      const { c, ready } = await TestClient.ready(s.wsUrl, s.sessionToken);
      expect(ready.acceptedFeatures).toEqual(['emotion', 'gaze']);
      c.bin(crop(0, 0));
      for (const ch of encodeAuxChunks({ tMicros: 0, jpeg })) c.bin(ch);
      const emotion = await c.next('emotion', 60_000);
      const gaze = await c.next('gaze', 60_000);
      c.close();
      return { emotion, gaze, pools: srv.ctx.batch!.threads.stats() };
    } finally {
      await srv.close();
    }
  }

  test('with media threads, a worker of its own analyses them: the main-thread answer', async () => {
    expect(expected.emotion).toHaveLength(8);
    const { emotion, gaze, pools } = await session({ VITALS_MEDIA_THREADS: '2' });
    expect(emotion).toEqual({ t: 'emotion', probs: expected.emotion, tMs: 0 });
    expect(gaze).toEqual({ t: 'gaze', yaw: expected.gaze!.yaw, pitch: expected.gaze!.pitch, tMs: 0 });
    expect(pools.liveAux).toMatchObject({ workers: 1 });
    expect(pools.video).toBeUndefined(); // not a video worker: no video job waits behind it, nor it behind one
  }, 120_000);

  test('with VITALS_MEDIA_THREADS=0, the main thread analyses them', async () => {
    const { emotion, pools } = await session({ VITALS_MEDIA_THREADS: '0' });
    expect(emotion).toEqual({ t: 'emotion', probs: expected.emotion, tMs: 0 });
    expect(pools.liveAux).toBeUndefined();
  }, 120_000);
});
