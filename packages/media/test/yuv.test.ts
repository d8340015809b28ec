/**
 * Issue 18: the pipeline decodes to the stream's own YUV and converts in JS only the pixels it
 * reads (yuv.ts). The conversion must give ffmpeg's RGB bit for bit (so no packet changes), for
 * untagged (BT.601) and BT.709-tagged streams; a crop read from a region-prepared frame must equal
 * one from a whole converted frame; and the whole pipeline must give the same packets either way.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { cropResizeRgb } from '@vitals/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePacket, resolveFfmpeg, videoToPackets, type VideoResult } from '../src/index.js';
import { probeVideo } from '../src/probe.js';
import { I420Frame, i420Bytes, i420ToRgbRegion, yuvMatrixFor, type YuvMatrix } from '../src/yuv.js';
import { cutReal, HAS_UBFC, tempDir, UBFC_SAMPLE } from './helpers.js';

const run = promisify(execFile);
const tmp = tempDir();
afterAll(() => tmp.cleanup());
const at = (name: string): string => path.join(tmp.dir, name);

async function raw(file: string, pixFmt: string): Promise<Buffer> {
  const { ffmpeg } = resolveFfmpeg();
  const args = ['-v', 'error', '-threads', '1', '-i', file, '-vsync', 'passthrough'];
  const { stdout } = await run(ffmpeg, [...args, '-f', 'rawvideo', '-pix_fmt', pixFmt, 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 1 << 30,
  });
  return stdout;
}

/** `seconds` of `src` re-encoded with BT.709 colour tags (phone videos carry them; ffmpeg then converts with BT.709). */
async function tag709(src: string, file: string, seconds: number): Promise<string> {
  const { ffmpeg } = resolveFfmpeg();
  const tags = ['-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709'];
  const enc = ['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '12', '-pix_fmt', 'yuv420p', ...tags];
  await run(ffmpeg, ['-v', 'error', '-y', '-i', src, '-t', String(seconds), '-an', ...enc, file]);
  return file;
}

function digest(r: VideoResult): Buffer[] {
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.packets.map((p) => Buffer.from(encodePacket(p)));
}

describe('which streams take the YUV path', () => {
  it('yuv420p, limited range, BT.601 or untagged or BT.709, even sizes; anything else goes through ffmpeg', () => {
    expect(yuvMatrixFor({ pixFmt: 'yuv420p', colorRange: 'unknown', colorSpace: 'unknown' }, 640, 480)).toBe('bt601');
    expect(yuvMatrixFor({ pixFmt: 'yuv420p', colorRange: 'tv', colorSpace: 'smpte170m' }, 640, 480)).toBe('bt601');
    expect(yuvMatrixFor({ pixFmt: 'yuv420p', colorSpace: 'bt709' }, 1280, 720)).toBe('bt709');
    expect(yuvMatrixFor({ pixFmt: 'yuvj420p' }, 640, 480)).toBeNull();
    expect(yuvMatrixFor({ pixFmt: 'yuv420p', colorRange: 'pc' }, 640, 480)).toBeNull();
    expect(yuvMatrixFor({ pixFmt: 'yuv420p', colorSpace: 'bt2020nc' }, 640, 480)).toBeNull();
    expect(yuvMatrixFor({ pixFmt: 'yuv420p10le' }, 640, 480)).toBeNull();
    expect(yuvMatrixFor({ pixFmt: 'yuv420p' }, 641, 480)).toBeNull();
  });
});

describe.skipIf(!HAS_UBFC)('YUV conversion against ffmpeg (UBFC-rPPG subject 3)', () => {
  let clip601: string;
  let clip709: string;
  beforeAll(async () => {
    clip601 = await cutReal(UBFC_SAMPLE, at('c601.mp4'), 4);
    clip709 = await tag709(clip601, at('c709.mp4'), 4);
  }, 120_000);

  for (const [name, matrix] of [
    ['untagged (BT.601)', 'bt601'],
    ['BT.709-tagged', 'bt709'],
  ] as const) {
    it(`every byte of every frame equals ffmpeg's rgb24 output: ${name}`, async () => {
      const file = matrix === 'bt601' ? clip601 : clip709;
      const probed = await probeVideo(resolveFfmpeg().ffprobe, file);
      if (!probed.ok) throw new Error(probed.message);
      const { width: w, height: h } = probed.info;
      expect(yuvMatrixFor(probed.info, w, h)).toBe(matrix);
      const [yuv, rgb] = await Promise.all([raw(file, 'yuv420p'), raw(file, 'rgb24')]);
      const frames = rgb.length / (w * h * 3);
      expect(frames).toBeGreaterThan(100);
      expect(yuv.length).toBe(frames * i420Bytes(w, h));
      const out = new Uint8Array(w * h * 3);
      let differing = 0;
      for (let f = 0; f < frames; f++) {
        const planes = yuv.subarray(f * i420Bytes(w, h), (f + 1) * i420Bytes(w, h));
        i420ToRgbRegion(planes, w, h, matrix, out, 0, 0, w, h);
        if (Buffer.compare(out, rgb.subarray(f * w * h * 3, (f + 1) * w * h * 3)) !== 0) differing++;
      }
      expect(differing).toBe(0);
    }, 120_000);
  }

  it('a crop of a region-prepared frame equals the crop of the whole converted frame, boxes off the edges too', async () => {
    const yuv = await raw(clip601, 'yuv420p');
    const [w, h] = [640, 480];
    const planes = new Uint8Array(yuv.subarray(0, i420Bytes(w, h)));
    const whole = new Uint8Array(w * h * 3);
    i420ToRgbRegion(planes, w, h, 'bt601' satisfies YuvMatrix, whole, 0, 0, w, h);
    const boxes = [
      { x: 250.3, y: 120.7, width: 140.2, height: 180.9 },
      { x: -30.5, y: -12.2, width: 90, height: 120 },
      { x: 600.9, y: 440.1, width: 80, height: 70 },
      { x: -400, y: 100, width: 50, height: 50 },
      { x: 700, y: 500, width: 10, height: 10 },
      { x: 0, y: 0, width: 1, height: 1 },
    ];
    for (const box of boxes) {
      const frame = new I420Frame(0, 0, planes, new Uint8Array(w * h * 3).fill(77), w, h, 'bt601');
      frame.prepareRegion(box);
      expect(cropResizeRgb(frame.data, w, h, box)).toEqual(cropResizeRgb(whole, w, h, box));
    }
  });

  it('the pipeline gives the same packets from YUV as from ffmpeg-converted RGB on a BT.709 stream', async () => {
    // The untagged case is held by tracker-equality.test.ts (the recorded digest, either path).
    const file = await tag709(UBFC_SAMPLE, at('c21-709.mp4'), 21);
    const viaYuv = digest(await videoToPackets(file));
    expect(viaYuv.length).toBeGreaterThan(700);
    expect(viaYuv).toEqual(digest(await videoToPackets(file, { yuv: false })));
  }, 600_000);
});
