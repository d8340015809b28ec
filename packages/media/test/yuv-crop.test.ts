/**
 * Issue 18: the tracked frames' face crops come straight from the I420 planes (yuv-crop.ts, a
 * WebAssembly SIMD kernel). The crop must be the bytes the JavaScript path makes (the frame's RGB
 * by i420ToRgbRegion, then cropResizeRgb), for both colour matrices, any frame width, and boxes
 * inside, across and outside the frame's edges, smaller or larger than the crop; the committed
 * module must be its text assembled. (Whole-pipeline equality: tracker-equality.test.ts and
 * yuv.test.ts, whose packet digests this path keeps.)
 */
import { CROP_SIZE, cropResizeRgb } from '@vitals/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { assemble, MODULES } from '../../../scripts/wasm/assemble.js';
import { i420CropAccelerated, i420CropRgb, useI420CropKernel } from '../src/yuv-crop.js';
import { YUV_CROP_WASM } from '../src/yuv-crop-wasm.js';
import { I420Frame, i420Bytes, i420ToRgbRegion, type YuvMatrix } from '../src/yuv.js';

function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 4294967296;
}

/** The JavaScript path: the whole frame's RGB, then the crop. */
function plainCrop(yuv: Uint8Array, w: number, h: number, m: YuvMatrix, box: Box): Uint8Array {
  const rgb = new Uint8Array(w * h * 3);
  i420ToRgbRegion(yuv, w, h, m, rgb, 0, 0, w, h);
  return cropResizeRgb(rgb, w, h, box);
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

afterEach(() => useI420CropKernel(true));

describe('face crop from I420 planes', () => {
  it('is the assembled yuv-crop.wat and loads here (Node has WebAssembly SIMD)', async () => {
    const m = MODULES.find((x) => x.name === 'YUV_CROP_WASM')!;
    expect(Array.from(await assemble(m.wat))).toEqual(Array.from(YUV_CROP_WASM));
    expect(i420CropAccelerated()).toBe(true);
  });

  it('equals the RGB path on random frames and boxes, both matrices, any even size', () => {
    const r = rng(5);
    const sizes: [number, number][] = [
      [640, 480],
      [66, 50],
      [42, 36],
      [1282, 722],
      [8, 8],
    ];
    let compared = 0;
    for (let t = 0; t < 150; t++) {
      const [w, h] = sizes[t % sizes.length];
      const yuv = Uint8Array.from({ length: i420Bytes(w, h) }, () => Math.floor(r() * 256));
      const m: YuvMatrix = t % 2 ? 'bt709' : 'bt601';
      // From a few pixels to larger than the frame, anywhere from a third off one edge to past the other.
      const width = 3 + r() * w * 1.3;
      const height = 3 + r() * h * 1.3;
      const box = { x: -0.4 * w + r() * 1.5 * w, y: -0.4 * h + r() * 1.5 * h, width, height };
      const got = i420CropRgb(yuv, w, h, m, box);
      expect(got).not.toBeNull();
      expect(Buffer.from(got!).equals(Buffer.from(plainCrop(yuv, w, h, m, box)))).toBe(true);
      compared++;
    }
    expect(compared).toBe(150);
  });

  it('clamps as the conversion does: black, white and extreme chroma', () => {
    const w = 96;
    const h = 64;
    for (const [Y, U, V] of [
      [0, 0, 0],
      [255, 255, 255],
      [16, 240, 16],
      [235, 16, 240],
      [255, 0, 255],
    ]) {
      const yuv = new Uint8Array(i420Bytes(w, h));
      yuv.fill(Y, 0, w * h);
      yuv.fill(U, w * h, w * h + (w * h) / 4);
      yuv.fill(V, w * h + (w * h) / 4);
      for (const m of ['bt601', 'bt709'] as const) {
        const box = { x: 10.5, y: -3.2, width: 70.1, height: 50.7 };
        expect(Array.from(i420CropRgb(yuv, w, h, m, box)!)).toEqual(Array.from(plainCrop(yuv, w, h, m, box)));
      }
    }
  });

  it('a frame crops the same whichever path runs (I420Frame.cropRgb; null with the kernel off)', () => {
    const r = rng(9);
    const w = 320;
    const h = 240;
    const yuv = Uint8Array.from({ length: i420Bytes(w, h) }, () => Math.floor(r() * 256));
    const frame = new I420Frame(0, 0, yuv, new Uint8Array(w * h * 3), w, h, 'bt601');
    const box = { x: 100.3, y: 60.8, width: 90.2, height: 101.7 };
    const fast = frame.cropRgb(box);
    expect(fast?.length).toBe(CROP_SIZE * CROP_SIZE * 3);
    useI420CropKernel(false);
    expect(frame.cropRgb(box)).toBeNull();
    frame.prepareRegion(box);
    expect(Array.from(cropResizeRgb(frame.data, w, h, box))).toEqual(Array.from(fast!));
  });

  it('leaves a box whose rows would grow the kernel past its memory cap to the JavaScript path', () => {
    // 8192x4096 (twice the probe's widest frame): the whole frame's rows are ~50 MB.
    const w = 8192;
    const h = 4096;
    const yuv = new Uint8Array(i420Bytes(w, h)).fill(128);
    expect(i420CropRgb(yuv, w, h, 'bt601', { x: 0, y: 0, width: w, height: h })).toBeNull();
    expect(i420CropRgb(yuv, w, h, 'bt601', { x: 4000, y: 2000, width: 300, height: 300 })).not.toBeNull();
  });

  it('leaves a span too large for 32-bit sums to the JavaScript path', () => {
    const w = 4096;
    const h = 3072;
    const yuv = new Uint8Array(i420Bytes(w, h)).fill(128);
    // A degenerate box (the crop's spans stop at three frame sizes): every output pixel averages
    // tens of millions of pixels, whose sum of samples could pass 2^31.
    expect(i420CropRgb(yuv, w, h, 'bt601', { x: -1e9, y: -1e9, width: 1e12, height: 1e12 })).toBeNull();
  });
});
