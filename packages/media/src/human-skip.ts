/**
 * Human's frame-change check, done on the RGB bytes instead of on tensors (issue 18).
 *
 * On every call with a cache sensitivity other than 0 (our tracking calls), Human 3.x compares the
 * input with the previous such input (its `image.skip`): it clones the whole frame, subtracts,
 * squares and sums it on tfjs (four passes over a float32 frame, ~2-3 ms at 640x480), and allows its
 * detector cache when the mean squared difference per channel, over 255, is at most the
 * sensitivity. The outcome decides whether FaceMesh tracks from its cached boxes or BlazeFace runs
 * again, so it must not change: `FrameChangeCheck` returns the same boolean. It sums the squared
 * differences of the bytes exactly (integers), and decides at once unless the exact mean is so
 * close to the threshold that float32 rounding of tfjs's sum could flip the comparison (any float32
 * summation of n non-negative terms is within n·2^-24 of the exact sum, 5.5 % at 640x480); there
 * it runs Human's own tensor operations on the same values.
 *
 * Human's check is a module-local function of its bundle, so `patchHumanSkip` adds one statement at
 * its start that hands the call to the hook of the module instance (`module.vitalsSkip`); a bundle
 * whose check does not have the expected shape is left as it is (Human's own check runs).
 */

/** The start of Human 3.x's `skip(config, input)` as esbuild emits it in `dist/human.node-wasm.js`. */
const SKIP_START = /async function [\w$]+\(([\w$]+),([\w$]+)\)\{let [\w$]+=!1;if\(\1\.cacheSensitivity===0\|\|/g;

/** Human's bundle with its frame-change check handed to `module.vitalsSkip`; null when not found once. */
export function patchHumanSkip(source: string): string | null {
  const found = [...source.matchAll(SKIP_START)];
  if (found.length !== 1) return null;
  const [m] = found;
  const at = m.index + m[0].indexOf('{') + 1;
  const [, config, input] = m;
  return `${source.slice(0, at)}if(module.vitalsSkip)return module.vitalsSkip(${config},${input});${source.slice(at)}`;
}

interface Tensor {
  shape: number[];
  dispose(): void;
  data(): Promise<ArrayLike<number>>;
}

/** The tfjs operations Human's check uses. */
export interface SkipTf {
  tensor(values: Float32Array, shape: number[], dtype: 'float32'): Tensor;
  sub(a: Tensor, b: Tensor): Tensor;
  mul(a: Tensor, b: Tensor): Tensor;
  sum(a: Tensor): Tensor;
}

/** Human's cache limits: larger inputs are never compared (and never allowed the cache). */
const MAX_HEIGHT = 3840;
const MAX_WIDTH = 2160;

/** One Human instance's previous compared input, and the check of the next one against it. */
export class FrameChangeCheck {
  private last: Uint8Array = new Uint8Array(0);
  private lastWidth = 0;
  private lastHeight = 0;
  private has = false;

  constructor(private readonly tf: SkipTf) {}

  /**
   * Human's `skip(config, input)` for `input`, the tensor of `rgb` (`[1, height, width, 3]`, the
   * bytes as float32): whether the detector cache may be used.
   */
  async skip(sensitivity: number | undefined, input: Tensor, rgb: Uint8Array): Promise<boolean> {
    const [, height, width] = input.shape;
    if (sensitivity === 0 || input.shape.length !== 4 || height > MAX_HEIGHT || width > MAX_WIDTH) return false;
    const n = height * width * 3;
    if (rgb.length !== n || input.shape[3] !== 3) throw new Error('frame-change check: input is not the RGB image');
    if (!this.has || this.lastWidth !== width || this.lastHeight !== height) {
      this.remember(rgb, width, height);
      return false;
    }
    const threshold = sensitivity || 0;
    const sum = squaredDifference(rgb, this.last, n);
    // Human: sum / height / width / 255 / 3 <= threshold, with tfjs's float32 sum.
    const exact = sum / (height || 1) / (width || 1) / 255 / 3;
    const bound = (n * 2 ** -24) / (1 - n * 2 ** -24) + 1e-9;
    let allowed: boolean;
    if (exact * (1 + bound) < threshold) allowed = true;
    else if (exact * (1 - bound) > threshold) allowed = false;
    else allowed = (await this.tensorRelative(input, width, height)) <= threshold;
    this.remember(rgb, width, height);
    return allowed;
  }

  /** Human's own computation, on the same float32 values (near the threshold only). */
  private async tensorRelative(input: Tensor, width: number, height: number): Promise<number> {
    const tf = this.tf;
    const last = tf.tensor(new Float32Array(this.last.subarray(0, width * height * 3)), input.shape, 'float32');
    const diff = tf.sub(input, last);
    const squared = tf.mul(diff, diff);
    const sum = tf.sum(squared);
    try {
      return (await sum.data())[0] / (height || 1) / (width || 1) / 255 / 3;
    } finally {
      for (const t of [last, diff, squared, sum]) t.dispose();
    }
  }

  private remember(rgb: Uint8Array, width: number, height: number): void {
    if (this.last.length < rgb.length) this.last = new Uint8Array(rgb.length);
    this.last.set(rgb);
    this.lastWidth = width;
    this.lastHeight = height;
    this.has = true;
  }
}

/** Sum of the squared differences of the first `n` bytes of `a` and `b`, exactly. */
export function squaredDifference(a: Uint8Array, b: Uint8Array, n: number): number {
  let sum = 0;
  let i = 0;
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    // Four bytes a load (a third less CPU than byte loads); a block's sum stays below 2^31.
    const words = n >> 2;
    const x = new Uint32Array(a.buffer, a.byteOffset, words);
    const y = new Uint32Array(b.buffer, b.byteOffset, words);
    for (let w = 0; w < words;) {
      const end = Math.min(words, w + 8192);
      let block = 0;
      for (; w < end; w++) {
        const p = x[w];
        const q = y[w];
        let d = (p & 255) - (q & 255);
        block += d * d;
        d = ((p >>> 8) & 255) - ((q >>> 8) & 255);
        block += d * d;
        d = ((p >>> 16) & 255) - ((q >>> 16) & 255);
        block += d * d;
        d = (p >>> 24) - (q >>> 24);
        block += d * d;
      }
      sum += block;
    }
    i = words * 4;
  }
  for (; i < n; i++) {
    const d = a[i] - b[i];
    sum += d * d;
  }
  return sum;
}
