/**
 * Issue 18: a leased Human's frame-change check runs on the RGB bytes (human-skip.ts) instead of
 * Human's tensor operations. Its answer decides whether FaceMesh tracks or BlazeFace detects again,
 * so it must be Human's answer for every input: checked here against Human's own algorithm on
 * tfjs-wasm, far from the threshold and at it (where float32 rounding of the sum matters), and the
 * hook must still find Human's check in the installed bundle (an upgrade that moves it fails here).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FrameChangeCheck, patchHumanSkip, squaredDifference, type SkipTf } from '../src/human-skip.js';
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
