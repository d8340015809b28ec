/**
 * Issue 18: a leased Human's frame-change check runs on the RGB bytes (human-skip.ts) instead of
 * Human's tensor operations. Its answer decides whether FaceMesh tracks or BlazeFace detects again,
 * so it must be Human's answer for every input: checked here against Human's own algorithm on
 * tfjs-wasm, far from the threshold and at it (where float32 rounding of the sum matters), and the
 * hook must still find Human's check in the installed bundle (an upgrade that moves it fails here).
 * For the video pipeline's I420 frames the check first decides from the planes (an upper bound of
 * the converted frames' difference) and converts the frame only when the bound is not clearly
 * under the threshold; the answers must still be Human's.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  FrameChangeCheck,
  patchHumanMeshCache,
  patchHumanSkip,
  squaredDifference,
  type SkipTf,
} from '../src/human-skip.js';
import { I420Frame, i420Bytes, i420DiffBound, i420ToRgbRegion, type YuvMatrix } from '../src/yuv.js';
import { humanPackageDir, loadHuman } from '../src/human-runtime.js';

type Tensor = Parameters<SkipTf['sub']>[0];
interface Tf extends SkipTf {
  clone(t: Tensor): Tensor;
}

/** Human 3.3's `image.skip` (src/image/image.ts), verbatim in tfjs operations. */
function humanSkip(tf: Tf): (sensitivity: number, input: Tensor) => Promise<boolean> {
  let last: Tensor | undefined;
  return async (sensitivity, input) => {
    if (sensitivity === 0 || input.shape[1] > 3840 || input.shape[2] > 2160) return false;
    if (!last || last.shape[1] !== input.shape[1] || last.shape[2] !== input.shape[2]) {
      last?.dispose();
      last = tf.clone(input);
      return false;
    }
    const diff = tf.sub(input, last);
    const squared = tf.mul(diff, diff);
    const sum = tf.sum(squared);
    const rel = (await sum.data())[0] / input.shape[1] / input.shape[2] / 255 / 3;
    for (const t of [last, diff, squared, sum]) t.dispose();
    last = tf.clone(input);
    return rel <= sensitivity;
  };
}

let tf: Tf;
beforeAll(async () => {
  tf = (await loadHuman()).human.tf as unknown as Tf;
}, 60_000);

/** A pseudo-random frame (a fixed LCG: the same bytes every run). */
function frame(width: number, height: number, seed: number): Uint8Array {
  const out = new Uint8Array(width * height * 3);
  let s = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = 20 + (s >>> 26);
  }
  return out;
}

/** `base` with every byte moved by `step`, and every `every`-th one by `delta` more. */
function shifted(base: Uint8Array, step: number, every = 0, delta = 0): Uint8Array {
  return base.map((v, i) => v + step + (every && i % every === 0 ? delta : 0));
}

describe('frame-change check', () => {
  it("finds Human's check in the installed bundle, once", () => {
    const source = readFileSync(path.join(humanPackageDir(), 'dist', 'human.node-wasm.js'), 'utf8');
    const patched = patchHumanSkip(source);
    expect(patched).not.toBeNull();
    expect(patched!.length).toBeGreaterThan(source.length);
    expect(patched!.match(/module\.vitalsSkip/g)).toHaveLength(2);
  });

  it('sums squared differences exactly, aligned or not', () => {
    const a = frame(33, 17, 1);
    const b = frame(33, 17, 2);
    for (const [offA, offB, n] of [
      [0, 0, a.length],
      [1, 0, a.length - 1],
      [0, 3, a.length - 3],
      [4, 4, a.length - 9],
    ]) {
      let want = 0;
      for (let i = 0; i < n; i++) want += (a[offA + i] - b[offB + i]) ** 2;
      expect(squaredDifference(a.subarray(offA), b.subarray(offB), n)).toBe(want);
    }
  });

  it("gives Human's answer for every frame, near the threshold too", async () => {
    const [w, h] = [160, 120];
    const base = frame(w, h, 7);
    // Per-channel mean squared difference over 255: 15 → 0.88, 16 → 1.004, a mix lands on 1.
    const sequence: { rgb: Uint8Array; width: number; height: number; sensitivity: number }[] = [];
    const push = (rgb: Uint8Array, sensitivity = 1, width = w, height = h): void => {
      sequence.push({ rgb, width, height, sensitivity });
    };
    push(base); // first: remembered, not allowed
    push(base); // identical: allowed
    push(shifted(base, 15)); // well below
    push(base, 0); // a fresh call: neither compared nor remembered
    push(shifted(base, 30)); // against the 15-shift: 15 again
    push(shifted(base, 46)); // 16: just above
    push(shifted(base, 62, 31, -1)); // 16, every 31st 15: about 1.000
    push(shifted(base, 77, 31, 1)); // 15, every 31st 16 or 17
    push(shifted(base, 100)); // far above
    push(frame(w, h, 99)); // unrelated frame
    push(frame(w / 2, h, 5), 1, w / 2, h); // another size: remembered, not allowed
    push(frame(w / 2, h, 5), 1, w / 2, h);
    push(frame(w, h, 5), 0.5);
    push(shifted(frame(w, h, 5), 11), 0.5); // 121/255 = 0.47
    push(shifted(frame(w, h, 5), 23), 0.5); // 144/255 = 0.56

    const reference = humanSkip(tf);
    const ours = new FrameChangeCheck(tf);
    const want: boolean[] = [];
    const got: boolean[] = [];
    for (const { rgb, width, height, sensitivity } of sequence) {
      const input = tf.tensor(new Float32Array(rgb), [1, height, width, 3], 'float32');
      want.push(await reference(sensitivity, input));
      got.push(await ours.skip(sensitivity, input, rgb));
      input.dispose();
    }
    expect(got).toEqual(want);
    // The sequence covers both answers, and the threshold itself.
    expect(want.filter(Boolean).length).toBeGreaterThan(2);
    expect(want.filter((x) => !x).length).toBeGreaterThan(2);
  });
});

/** A pseudo-random I420 frame: luma 40-230, chroma 90-170 (the same bytes every run). */
function yuvFrame(width: number, height: number, seed: number): Uint8Array {
  const out = new Uint8Array(i420Bytes(width, height));
  let s = seed >>> 0;
  for (let i = 0; i < out.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = i < width * height ? 40 + ((s >>> 24) % 191) : 90 + ((s >>> 24) % 81);
  }
  return out;
}

/** `base` with its luma moved by `dy` and its chroma by `dc`. */
function yuvShifted(base: Uint8Array, width: number, height: number, dy: number, dc = 0): Uint8Array {
  const n = width * height;
  return base.map((v, i) => v + (i < n ? dy : dc));
}

function rgbOf(yuv: Uint8Array, width: number, height: number, matrix: YuvMatrix): Uint8Array {
  const out = new Uint8Array(width * height * 3);
  i420ToRgbRegion(yuv, width, height, matrix, out, 0, 0, width, height);
  return out;
}

describe('frame-change check on I420 frames', () => {
  it("finds FaceMesh's detector cache in the installed bundle, once", () => {
    const source = readFileSync(path.join(humanPackageDir(), 'dist', 'human.node-wasm.js'), 'utf8');
    const patched = patchHumanMeshCache(source);
    expect(patched).not.toBeNull();
    expect(patched!.match(/module\.vitalsMeshCache=/g)).toHaveLength(1);
    expect(patchHumanMeshCache('var x={boxes:[]};')).toBeNull();
  });

  it("bounds the converted frames' squared difference from above, for both matrices", () => {
    const [w, h] = [48, 30];
    for (const matrix of ['bt601', 'bt709'] as const) {
      for (let seed = 1; seed <= 12; seed++) {
        const a = yuvFrame(w, h, seed);
        const pairs = [yuvFrame(w, h, seed + 100), yuvShifted(a, w, h, seed % 5, (seed % 3) - 1), a];
        for (const b of pairs) {
          const exact = squaredDifference(rgbOf(a, w, h, matrix), rgbOf(b, w, h, matrix), w * h * 3);
          const bound = i420DiffBound(a, b, w, h, matrix);
          expect(bound).toBeGreaterThanOrEqual(exact);
          if (b === a) expect(bound).toBe(0);
        }
      }
    }
  });

  it("gives Human's answer for every frame, converting only when the bound cannot decide", async () => {
    const [w, h] = [160, 120];
    const base = yuvFrame(w, h, 3);
    const sequence: { yuv: Uint8Array; width: number; height: number; sensitivity: number; matrix: YuvMatrix }[] = [];
    const push = (yuv: Uint8Array, sensitivity = 1, width = w, height = h, matrix: YuvMatrix = 'bt601'): void => {
      sequence.push({ yuv, width, height, sensitivity, matrix });
    };
    push(base); // first: remembered, not allowed
    push(base); // identical: allowed from the bound
    push(yuvShifted(base, w, h, 2)); // small change: allowed from the bound
    push(yuvShifted(base, w, h, 14)); // 12 luma levels: ~0.75, the bound (~1.5) cannot decide; exact, allowed
    push(yuvShifted(base, w, h, 14), 0); // a fresh call: neither compared nor remembered
    push(yuvShifted(base, w, h, 27)); // 13 levels against the previous: ~0.88, exact
    push(yuvShifted(base, w, h, 40, 6)); // above
    push(yuvFrame(w, h, 77)); // unrelated frame
    push(yuvShifted(yuvFrame(w, h, 77), w, h, 1), 1, w, h, 'bt709'); // another matrix: exact
    push(yuvFrame(w / 2, h, 5), 1, w / 2, h); // another size: remembered, not allowed
    push(yuvShifted(yuvFrame(w / 2, h, 5), w / 2, h, -3), 1, w / 2, h);

    const reference = humanSkip(tf);
    const ours = new FrameChangeCheck(tf);
    const want: boolean[] = [];
    const got: boolean[] = [];
    const converted: boolean[] = [];
    for (const { yuv, width, height, sensitivity, matrix } of sequence) {
      const rgb = rgbOf(yuv, width, height, matrix);
      const input = tf.tensor(new Float32Array(rgb), [1, height, width, 3], 'float32');
      want.push(await reference(sensitivity, input));
      const f = new I420Frame(0, 0, yuv, new Uint8Array(width * height * 3), width, height, matrix);
      let whole = false;
      got.push(
        await ours.skipI420(sensitivity, input, f, () => {
          f.prepareRegion(null);
          whole = true;
        }),
      );
      converted.push(whole);
      if (whole) expect(Buffer.compare(f.data, rgb)).toBe(0);
      input.dispose();
    }
    expect(got).toEqual(want);
    expect(want.filter(Boolean).length).toBeGreaterThan(2);
    expect(want.filter((x) => !x).length).toBeGreaterThan(2);
    // The bound decided the small changes alone; the exact check ran where it could not.
    expect(converted.slice(0, 4)).toEqual([false, false, false, true]);
    expect(converted.filter(Boolean).length).toBeLessThan(sequence.length - 3);
  });
});
