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

  it('the word-wide conversion (widths that are multiples of 4) gives the byte-wide one, whole frames and regions', () => {
    for (const matrix of ['bt601', 'bt709'] as const) {
      const [w, h] = [44, 26];
      const planes = new Uint8Array(i420Bytes(w, h));
      let s = 12345;
      for (let i = 0; i < planes.length; i++) planes[i] = (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) >>> 24;
      // The same pixels in a buffer one byte off alignment take the byte-wide path.
      const wordWide = new Uint8Array(w * h * 3).fill(9);
      const byteWide = new Uint8Array(w * h * 3 + 1).fill(9).subarray(1);
      for (const [x0, y0, x1, y1] of [
        [0, 0, w, h],
        [5, 3, 18, 11],
        [41, 20, 44, 26],
      ]) {
        i420ToRgbRegion(planes, w, h, matrix, wordWide, x0, y0, x1, y1);
        i420ToRgbRegion(planes, w, h, matrix, byteWide, x0, y0, x1, y1);
        // Inside the region both are exact; outside it the word-wide one may have converted more.
        for (let y = y0; y < y1; y++) {
          const row = (o: Uint8Array): number[] => [...o.subarray((y * w + x0) * 3, (y * w + x1) * 3)];
          expect(row(wordWide)).toEqual(row(byteWide));
        }
      }
      expect(Buffer.compare(wordWide, byteWide)).toBe(0); // the first region was the whole frame
    }
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

  it('the same packets either way across scene cuts and a moving face (the frame-change check refuses, the cache boxes move)', async () => {
    // Subject 3, a cut to subject 5, a cut back to subject 3 moving (a pan), 7, 7 and 8 s
    // long: each cut is a tracking call whose frame-change bound cannot decide (the exact check
    // then refuses, and the whole frame reaches the tensor), and FaceMesh's cached boxes follow the
    // moving face (only they reach it on the other tracking calls).
    const { ffmpeg } = resolveFfmpeg();
    const other = path.join(path.dirname(path.dirname(UBFC_SAMPLE)), 'subject5/vid.mp4');
    const file = at('cuts.mp4');
    const pan = "crop=w=560:h=420:x='40+38*sin(t*1.3)':y='30+28*sin(t*0.9)',scale=640:480";
    await run(ffmpeg, [
      ...['-v', 'error', '-y', '-t', '7', '-i', UBFC_SAMPLE, '-t', '7', '-i', other, '-ss', '10', '-t', '8'],
      ...['-i', UBFC_SAMPLE, '-filter_complex'],
      `[0:v]fps=30,setsar=1[a];[1:v]fps=30,setsar=1[b];[2:v]fps=30,${pan},setsar=1[c];[a][b][c]concat=n=3:v=1[v]`,
      ...['-map', '[v]', '-an', '-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '16', '-pix_fmt', 'yuv420p', file],
    ]);
    const viaYuv = digest(await videoToPackets(file));
    expect(viaYuv.length).toBeGreaterThan(500);
    expect(viaYuv).toEqual(digest(await videoToPackets(file, { yuv: false })));
  }, 600_000);
});
