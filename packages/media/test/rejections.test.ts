/**
 * Spec: Video rejections, checked in order (CLARIFICATIONS 22). Every code is produced here by a
 * generated clip, so these cases run everywhere (no recordings needed).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFfmpeg, videoToPackets, type VideoStats } from '../src/index.js';
import { faceRejection, sizeRejection, timingRejection } from '../src/rules.js';
import type { FaceDetector } from '../src/detector.js';
import { makeClip, skinDetector, tempDir } from './helpers.js';

const run = promisify(execFile);
const tmp = tempDir();
afterAll(() => tmp.cleanup());
const at = (name: string): string => path.join(tmp.dir, name);
const FACE: [number, number, number, number] = [100, 50, 120, 140];

describe('unsupported_media', () => {
  beforeAll(async () => {
    const bytes = new Uint8Array(200_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919 + 13) & 0xff;
    writeFileSync(at('garbage.mp4'), bytes);
    writeFileSync(at('text.webm'), 'this is not a video\n'.repeat(100));
    await makeClip(at('mpeg4.mp4'), {
      seconds: 21,
      fps: 25,
      faces: [FACE],
      codecArgs: ['-c:v', 'mpeg4', '-q:v', '5'],
    });
    await makeClip(at('h264.mkv'), { seconds: 21, fps: 25, faces: [FACE] });
    await makeClip(at('mjpeg.avi'), { seconds: 21, fps: 25, faces: [FACE], codecArgs: ['-c:v', 'mjpeg'] });
    await makeClip(at('still.png'), { seconds: 1, fps: 1, codecArgs: ['-frames:v', '1'] });
  });

  it.each([
    ['garbage bytes named .mp4', 'garbage.mp4'],
    ['a text file named .webm', 'text.webm'],
    ['MPEG-4 Part 2 in MP4 (a transcode)', 'mpeg4.mp4'],
    ['H.264 in Matroska (not WebM)', 'h264.mkv'],
    ['MJPEG in AVI', 'mjpeg.avi'],
    ['a still image', 'still.png'],
    ['a path that does not exist', 'missing.mp4'],
  ])('%s', async (_label, name) => {
    const r = await videoToPackets(at(name), { detector: skinDetector });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.code).toBe('unsupported_media');
  });
});

describe('size caps: refused from the probe, before decoding (issue 19)', () => {
  /** A detector that counts: zero calls means no frame was decoded and analysed. */
  let detected = 0;
  const counting: FaceDetector = { ...skinDetector, detect: (...a) => (detected++, skinDetector.detect(...a)) };
  beforeAll(async () => {
    await makeClip(at('8k-square.mp4'), { seconds: 1, fps: 20, width: 8192, height: 8192 });
    await makeClip(at('16k-still.mp4'), { seconds: 1, fps: 1, width: 16000, height: 16000 });
    await makeClip(at('1080p250.mp4'), { seconds: 1, fps: 250, width: 1920, height: 1080 });
  }, 120_000);

  it.each([
    ['8192x8192 at 20 fps', '8k-square.mp4', /8192x8192 \(67\.1 megapixels\); at most 4096 pixels a side/],
    ['a single 16000x16000 frame', '16k-still.mp4', /16000x16000/],
    ['1920x1080 at 250 fps', '1080p250.mp4', /at 250\.0 fps \(518\.4 megapixels a second\); at most 500\.0/],
  ])('%s → unsupported_media saying why, no frame decoded', async (_label, name, message) => {
    detected = 0;
    const r = await videoToPackets(at(name), { detector: counting });
    expect(r).toMatchObject({ ok: false, code: 'unsupported_media', message: expect.stringMatching(message) });
    expect(detected).toBe(0);
  });

  it.each([
    [4096, 3072, 30, true],
    [3840, 2160, 60, true],
    [1920, 1080, 240, true],
    [3072, 4096, 30, true],
    [4097, 100, 30, false],
    [4096, 3073, 30, false],
    [1920, 1080, 250, false],
    [1280, 720, NaN, true],
  ])('%ix%i at %s fps within the caps: %s', (w, h, fps, ok) => expect(sizeRejection(w, h, fps, {}) === null).toBe(ok));

  it('a decode over its time budget is refused as unsupported_media', async () => {
    const clip = await makeClip(at('budget.mp4'), { seconds: 21, fps: 25, faces: [FACE] });
    const r = await videoToPackets(clip, { detector: skinDetector, decodeBudgetMs: 50 });
    expect(r).toMatchObject({ ok: false, code: 'unsupported_media', message: expect.stringMatching(/within 0\.1 s/) });
  });
});

describe('one hour at most (docs/decisions.md "Batch and uploads")', () => {
  let detected = 0;
  const counting: FaceDetector = { ...skinDetector, detect: (...a) => (detected++, skinDetector.detect(...a)) };
  const ffmpeg = (args: string[], opts: { encoding?: 'buffer' } = {}) =>
    run(resolveFfmpeg().ffmpeg, ['-v', 'error', '-y', ...args], { ...opts, maxBuffer: 64 << 20 });

  beforeAll(async () => {
    // 62 minutes without a re-encode: a 2 s clip repeated (the container says 3720 s).
    const short = await makeClip(at('two-seconds.mp4'), { seconds: 2, fps: 5, width: 160, height: 120 });
    await ffmpeg(['-stream_loop', '1859', '-i', short, '-c', 'copy', at('62-min.mp4')]);
    // WebM written to a pipe has no duration in its header: only the decoded frames tell.
    const { stdout } = await ffmpeg(
      [
        ...['-f', 'lavfi', '-i', 'color=c=0x303030:size=320x240:rate=25:duration=25'],
        ...['-vf', `drawbox=x=100+2*sin(t):y=50:w=120:h=140:color=0xE0AC8C:t=fill`],
        ...['-c:v', 'libvpx', '-deadline', 'realtime', '-f', 'webm', 'pipe:1'],
      ],
      { encoding: 'buffer' },
    );
    writeFileSync(at('no-duration.webm'), stdout as unknown as Buffer);
  }, 120_000);

  it('a 62-minute video is refused from the probe, saying how long it is, before any frame is decoded', async () => {
    detected = 0;
    const r = await videoToPackets(at('62-min.mp4'), { detector: counting });
    expect(r).toMatchObject({
      ok: false,
      code: 'unsupported_media',
      message:
        'The video lasts 62 min, longer than the 60 min a video may last: cut out the part to measure and upload that.',
    });
    expect(detected).toBe(0);
  });

  it('a video whose container does not say its length is stopped once its frames pass the cap', async () => {
    const probe = await run(resolveFfmpeg().ffprobe, [
      '-v',
      'error',
      '-show_entries',
      'format=duration',
      '-of',
      'csv=p=0',
      at('no-duration.webm'),
    ]);
    expect(probe.stdout.trim()).toMatch(/^(N\/A)?$/); // the premise: no duration to refuse from
    detected = 0;
    const r = await videoToPackets(at('no-duration.webm'), { detector: counting, maxDurationSec: 21 });
    expect(r).toMatchObject({
      ok: false,
      code: 'unsupported_media',
      message: expect.stringMatching(/^The video is longer than the 21\.0 s a video may last/),
    });
    // Analyses stop near 21 s (4 a second): the rest of the 25 s is not followed.
    expect(detected).toBeGreaterThan(0);
    expect(detected).toBeLessThanOrEqual(4 * 22);
    // The same file under the default cap is measured.
    const whole = await videoToPackets(at('no-duration.webm'), { detector: skinDetector });
    expect(whole.ok, JSON.stringify(!whole.ok && whole)).toBe(true);
  });
});

describe('timing rules', () => {
  it('too_short: under 20 s', async () => {
    const r = await videoToPackets(await makeClip(at('short.mp4'), { seconds: 5, fps: 30, faces: [FACE] }), {
      detector: skinDetector,
    });
    expect(r).toMatchObject({ ok: false, code: 'too_short' });
  });

  it('insufficient_frame_rate: 15 fps', async () => {
    const r = await videoToPackets(await makeClip(at('15fps.mp4'), { seconds: 22, fps: 15, faces: [FACE] }), {
      detector: skinDetector,
    });
    expect(r).toMatchObject({ ok: false, code: 'insufficient_frame_rate' });
  });

  it('too short and too slow names too_short (order)', async () => {
    const r = await videoToPackets(await makeClip(at('short15.mp4'), { seconds: 6, fps: 15, faces: [FACE] }), {
      detector: skinDetector,
    });
    expect(r).toMatchObject({ ok: false, code: 'too_short' });
  });

  it('a real 20.0 s clip at exactly 20 fps passes both', async () => {
    const r = await videoToPackets(await makeClip(at('edge.mp4'), { seconds: 20, fps: 20, faces: [FACE] }), {
      detector: skinDetector,
    });
    expect(r.ok).toBe(true);
  });
});

describe('face rules', () => {
  it('face_not_detected with the real detector: a test pattern has no face', async () => {
    const file = await makeClip(at('noface.mp4'), {
      seconds: 21,
      fps: 20,
      width: 256,
      height: 192,
      background: 'testsrc',
    });
    const r = await videoToPackets(file);
    expect(r).toMatchObject({ ok: false, code: 'face_not_detected' });
    if (!r.ok) expect(r.stats?.framesWithFace).toBe(0);
  }, 90_000);

  it('face_not_detected: a face in only 60 % of frames', async () => {
    const file = await makeClip(at('partial.mp4'), { seconds: 21, fps: 25, faces: [FACE], faceShare: 0.6 });
    const r = await videoToPackets(file, { detector: skinDetector });
    expect(r).toMatchObject({ ok: false, code: 'face_not_detected' });
    if (!r.ok) expect(r.stats?.facePresence).toBeGreaterThan(0.5);
  });

  it('a face in 80 % of frames is enough', async () => {
    const file = await makeClip(at('mostly.mp4'), { seconds: 21, fps: 25, faces: [FACE], faceShare: 0.8 });
    expect((await videoToPackets(file, { detector: skinDetector })).ok).toBe(true);
  });

  it('face_too_small: median width under 100 px', async () => {
    const file = await makeClip(at('small.mp4'), { seconds: 21, fps: 25, faces: [[140, 80, 60, 70]] });
    const r = await videoToPackets(file, { detector: skinDetector });
    expect(r).toMatchObject({ ok: false, code: 'face_too_small' });
    if (!r.ok) expect(r.stats?.medianFaceWidthPx).toBeLessThan(100);
  });

  it('small and mostly absent names face_not_detected (order)', async () => {
    const file = await makeClip(at('smallpartial.mp4'), {
      seconds: 21,
      fps: 25,
      faces: [[140, 80, 60, 70]],
      faceShare: 0.5,
    });
    expect(await videoToPackets(file, { detector: skinDetector })).toMatchObject({
      ok: false,
      code: 'face_not_detected',
    });
  });

  it('a low-bitrate recording is not a rejection', async () => {
    const file = await makeClip(at('lowrate.mp4'), {
      seconds: 21,
      fps: 25,
      faces: [FACE],
      codecArgs: ['-c:v', 'libx264', '-b:v', '40k', '-pix_fmt', 'yuv420p'],
    });
    expect((await videoToPackets(file, { detector: skinDetector })).ok).toBe(true);
  });
});

describe('rule order on the figures alone (rules.ts)', () => {
  const stats = (o: Partial<VideoStats>): VideoStats => ({
    durationSec: 30,
    fps: 30,
    width: 640,
    height: 480,
    codec: 'h264',
    container: 'mp4',
    framesDecoded: 900,
    framesWithFace: 900,
    facePresence: 1,
    medianFaceWidthPx: 150,
    multipleFaces: false,
    maxFacesSeen: 1,
    detector: 't',
    bitRateBps: null,
    ...o,
  });
  it.each([
    [{ durationSec: 19.9, fps: 10, facePresence: 0, medianFaceWidthPx: 0 }, 'too_short'],
    [{ fps: 19.9, facePresence: 0, medianFaceWidthPx: 0 }, 'insufficient_frame_rate'],
    [{ facePresence: 0.69, medianFaceWidthPx: 50 }, 'face_not_detected'],
    [{ facePresence: 0.7, medianFaceWidthPx: 99.9 }, 'face_too_small'],
    [{ durationSec: 20, fps: 20, facePresence: 0.7, medianFaceWidthPx: 100 }, null],
  ] as [Partial<VideoStats>, string | null][])('%o → %s', (o, code) => {
    const s = stats(o);
    const r = timingRejection(s.durationSec, s.fps, s) ?? faceRejection(s);
    expect(r?.code ?? null).toBe(code);
  });
});
