import { describe, expect, it } from 'vitest';
import { BoxKalman, cropResizeRgb, meanLuma, CROP_PIXEL_BYTES } from '../src/index.js';

function image(width: number, height: number, fill: (x: number, y: number) => [number, number, number]): Uint8Array {
  const a = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) a.set(fill(x, y), (y * width + x) * 3);
  return a;
}

describe('cropResizeRgb', () => {
  it('returns 36x36x3 by default, the size of a type-1 payload', () => {
    const src = image(64, 48, () => [10, 20, 30]);
    const out = cropResizeRgb(src, 64, 48, { x: 4, y: 4, width: 40, height: 40 });
    expect(out.length).toBe(CROP_PIXEL_BYTES);
    expect(Array.from(out.subarray(0, 3))).toEqual([10, 20, 30]);
  });

  it('takes exactly the box, no padding: a box on a coloured square sees only that colour', () => {
    const src = image(100, 100, (x, y) => (x >= 20 && x < 56 && y >= 30 && y < 66 ? [200, 100, 50] : [0, 0, 0]));
    const out = cropResizeRgb(src, 100, 100, { x: 20, y: 30, width: 36, height: 36 });
    for (let i = 0; i < out.length; i += 3) expect([out[i], out[i + 1], out[i + 2]]).toEqual([200, 100, 50]);
  });

  it('area-averages when downscaling (each output pixel is the mean of its block)', () => {
    // 72x72 checkerboard of 0/255 single pixels: every 2x2 block averages to 127.5 -> 128.
    const src = image(72, 72, (x, y) => ((x + y) % 2 === 0 ? [255, 255, 255] : [0, 0, 0]));
    const out = cropResizeRgb(src, 72, 72, { x: 0, y: 0, width: 72, height: 72 });
    expect(new Set(out)).toEqual(new Set([128]));
  });

  it('keeps orientation: left half red, right half blue', () => {
    const src = image(72, 72, (x) => (x < 36 ? [255, 0, 0] : [0, 0, 255]));
    const out = cropResizeRgb(src, 72, 72, { x: 0, y: 0, width: 72, height: 72 });
    expect(Array.from(out.subarray(0, 3))).toEqual([255, 0, 0]);
    expect(Array.from(out.subarray(35 * 3, 36 * 3))).toEqual([0, 0, 255]);
  });

  it('repeats edge pixels for a box partly outside the frame', () => {
    const src = image(40, 40, () => [7, 8, 9]);
    const out = cropResizeRgb(src, 40, 40, { x: -20, y: -20, width: 80, height: 80 });
    expect(new Set(out)).toEqual(new Set([7, 8, 9]));
  });

  it('drops alpha from RGBA input', () => {
    const w = 36;
    const rgba = new Uint8ClampedArray(w * w * 4);
    for (let i = 0; i < rgba.length; i += 4) rgba.set([1, 2, 3, 255], i);
    const out = cropResizeRgb(rgba, w, w, { x: 0, y: 0, width: w, height: w }, 36, 36, 4);
    expect(Array.from(out.subarray(0, 6))).toEqual([1, 2, 3, 1, 2, 3]);
  });

  it('resizes to other sizes (448x448 aux crops)', () => {
    const src = image(50, 50, () => [1, 1, 1]);
    expect(cropResizeRgb(src, 50, 50, { x: 0, y: 0, width: 50, height: 50 }, 448, 448).length).toBe(448 * 448 * 3);
  });

  it('rejects a source smaller than its dimensions', () => {
    expect(() => cropResizeRgb(new Uint8Array(10), 10, 10, { x: 0, y: 0, width: 5, height: 5 })).toThrow(RangeError);
  });
});

describe('BoxKalman', () => {
  it('starts at the first measurement', () => {
    const k = new BoxKalman();
    expect(k.current()).toBeNull();
    expect(k.update({ x: 10, y: 20, width: 100, height: 120 }, 0)).toEqual({
      x: 10,
      y: 20,
      width: 100,
      height: 120,
    });
    expect(k.initialized).toBe(true);
  });

  it('reduces measurement jitter of a still face', () => {
    const k = new BoxKalman();
    let rawErr = 0;
    let smoothErr = 0;
    let seed = 1;
    const noise = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 8;
    for (let i = 0; i < 300; i++) {
      const z = { x: 200 + noise(), y: 100 + noise(), width: 240, height: 240 };
      const s = k.update(z, i / 30);
      if (i > 30) {
        rawErr += Math.abs(z.x - 200);
        smoothErr += Math.abs(s.x - 200);
      }
    }
    expect(smoothErr).toBeLessThan(rawErr * 0.5);
  });

  it('follows a face moving at constant speed without lasting lag', () => {
    const k = new BoxKalman();
    let s = k.update({ x: 0, y: 0, width: 200, height: 200 }, 0);
    for (let i = 1; i <= 120; i++) s = k.update({ x: i * 2, y: 0, width: 200, height: 200 }, i / 30);
    expect(Math.abs(s.x - 240)).toBeLessThan(2);
  });

  it('can smooth the size harder than the position (sizeProcessNoise)', () => {
    const run = (opts: ConstructorParameters<typeof BoxKalman>[0]): number => {
      const k = new BoxKalman(opts);
      let seed = 7;
      let err = 0;
      for (let i = 0; i < 300; i++) {
        const n = ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 10;
        const s = k.update({ x: 100, y: 100, width: 200 + n, height: 200 + n }, i / 30);
        if (i > 30) err += Math.abs(s.width - 200);
      }
      return err;
    };
    expect(run({ sizeProcessNoise: 0.03 })).toBeLessThan(run({ sizeProcessNoise: 0.3 }) * 0.7);
  });

  it('starts over after reset', () => {
    const k = new BoxKalman();
    k.update({ x: 0, y: 0, width: 100, height: 100 }, 0);
    k.reset();
    expect(k.update({ x: 500, y: 500, width: 50, height: 50 }, 1).x).toBe(500);
  });
});

describe('meanLuma', () => {
  it('is 1 for white and 0 for black', () => {
    expect(meanLuma(new Uint8Array([255, 255, 255]))).toBeCloseTo(1, 5);
    expect(meanLuma(new Uint8Array([0, 0, 0, 0, 0, 0]))).toBe(0);
  });
});
