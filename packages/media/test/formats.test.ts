/** Containers and codecs the pipeline accepts (spec: Video rejections; `unsupported_media`). */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveFfmpeg, videoToPackets } from '../src/index.js';
import { makeClip, skinDetector, tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const at = (name: string): string => path.join(tmp.dir, name);
const FACE: [number, number, number, number] = [100, 50, 120, 140];

describe('resolveFfmpeg', () => {
  it('falls back to the npm binaries when PATH has none', () => {
    const r = resolveFfmpeg({ PATH: '' });
    expect(r.source).toBe('npm');
    expect(r.ffmpeg).toMatch(/ffmpeg$/);
    expect(r.ffprobe).toMatch(/ffprobe$/);
  });

  it('prefers FFMPEG_PATH', () => {
    const npm = resolveFfmpeg({ PATH: '' });
    const r = resolveFfmpeg({ PATH: '', FFMPEG_PATH: npm.ffmpeg, FFPROBE_PATH: npm.ffprobe });
    expect(r).toEqual({ ffmpeg: npm.ffmpeg, ffprobe: npm.ffprobe, source: 'env' });
  });

  it('fails loudly when FFMPEG_PATH does not run', () => {
    expect(() => resolveFfmpeg({ PATH: '', FFMPEG_PATH: '/nonexistent/ffmpeg' })).toThrow(/FFMPEG_PATH/);
  });
});

const x264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'];
describe.each([
  ['H.264 in MP4', 'h264.mp4', x264, 'h264', 'mp4'],
  ['H.264 in MOV', 'h264.mov', x264, 'h264', 'mov'],
  ['intra-only high-bitrate H.264', 'intra.mp4', [...x264, '-g', '1', '-b:v', '12M'], 'h264', 'mp4'],
  [
    'HEVC in MP4',
    'hevc.mp4',
    ['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'log-level=error', '-pix_fmt', 'yuv420p'],
    'hevc',
    'mp4',
  ],
  [
    'VP8 in WebM',
    'vp8.webm',
    ['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '500k'],
    'vp8',
    'webm',
  ],
  [
    'VP9 in WebM',
    'vp9.webm',
    ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '500k'],
    'vp9',
    'webm',
  ],
])('%s', (_label, name, codecArgs, codec, container) => {
  it('is decoded into packets', async () => {
    const file = await makeClip(at(name), { seconds: 20.5, fps: 20, faces: [FACE], codecArgs });
    const r = await videoToPackets(file, { detector: skinDetector });
    if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
    expect(r.stats).toMatchObject({ codec, container, framesDecoded: 410, facePresence: 1 });
  }, 60_000);
});

it('scales videos larger than 1280 px for decoding but reports face width in source pixels', async () => {
  const file = await makeClip(at('big.mp4'), {
    seconds: 20.5,
    fps: 20,
    width: 1600,
    height: 900,
    faces: [[700, 250, 300, 360]],
  });
  const r = await videoToPackets(file, { detector: skinDetector });
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  expect(r.stats).toMatchObject({ width: 1600, height: 900 });
  expect(r.stats.medianFaceWidthPx).toBeGreaterThan(285);
  expect(r.stats.medianFaceWidthPx).toBeLessThan(315);
}, 90_000);

it('applies the rotation of phone videos (display size, frames not torn)', async () => {
  const plain = await makeClip(at('unrotated.mp4'), { seconds: 20.5, fps: 20, faces: [FACE] });
  // The display matrix is written when remuxing (ffmpeg 4.1 drops it when encoding).
  const file = at('rotated.mp4');
  await promisify(execFile)(resolveFfmpeg().ffmpeg, [
    '-v',
    'error',
    '-y',
    '-i',
    plain,
    '-c',
    'copy',
    '-metadata:s:v:0',
    'rotate=90',
    file,
  ]);
  const r = await videoToPackets(file, { detector: skinDetector });
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  expect(r.stats).toMatchObject({ width: 240, height: 320, facePresence: 1 });
  // The drawn 120x140 box, turned a quarter: 140 wide.
  expect(r.stats.medianFaceWidthPx).toBeGreaterThan(130);
  expect(r.stats.medianFaceWidthPx).toBeLessThan(150);
}, 60_000);
