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
import { i420Bytes, i420DiffBound, i420ToRgbRegion, sumOfTable, type YuvMatrix } from './yuv.js';

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

/** FaceMesh's detector cache in Human 3.x's bundle: the boxes the next tracking call crops. */
const MESH_CACHE = /var ([\w$]+)=\{boxes:\[\],skipped:Number\.MAX_SAFE_INTEGER,timestamp:0\}/g;

/** What FaceMesh keeps between calls (Human's `facemesh.ts` `cache`). */
export interface MeshCache {
  boxes: { startPoint: [number, number]; endPoint: [number, number] }[];
  skipped: number;
  timestamp: number;
}

/**
 * Human's bundle with FaceMesh's detector cache also reachable as `module.vitalsMeshCache` (the
 * same object: Human only ever replaces its `boxes`); null when the cache is not found once.
 */
export function patchHumanMeshCache(source: string): string | null {
  const found = [...source.matchAll(MESH_CACHE)];
  if (found.length !== 1) return null;
  const [m] = found;
  const at = m.index + m[0].indexOf('=') + 1;
  return `${source.slice(0, at)}module.vitalsMeshCache=${source.slice(at)}`;
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

/** A decoded I420 frame (yuv.ts `I420Frame`): its planes, and its RGB made on demand. */
export interface I420Input {
  readonly yuv: Uint8Array;
  readonly data: Uint8Array;
  readonly width: number;
  readonly height: number;
  readonly matrix: YuvMatrix;
}

/** One Human instance's previous compared input, and the check of the next one against it. */
export class FrameChangeCheck {
  /** The previous compared input: RGB bytes, or an I420 frame's planes (`lastKind` its matrix). */
  private last: Uint8Array = new Uint8Array(0);
  private lastKind: 'rgb' | YuvMatrix = 'rgb';
  private lastWidth = 0;
  private lastHeight = 0;
  private has = false;
  /** The previous I420 input converted, when the exact check needs its RGB. */
  private lastRgbScratch: Uint8Array = new Uint8Array(0);

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
      this.remember(rgb, 'rgb', width, height);
      return false;
    }
    const allowed = await this.decide(sensitivity || 0, input, rgb, width, height);
    this.remember(rgb, 'rgb', width, height);
    return allowed;
  }

  /**
   * The same answer for an I420 frame whose RGB is not made yet (issue 18): from its planes and the
   * previous input's, the bound `i420DiffBound` decides whenever it is clearly under the threshold
   * (nearly every tracking call of a video); otherwise `wholeFrame()` must make `frame.data` and
   * the tensor's values the whole frame's, and the exact check runs as for RGB.
   */
  async skipI420(
    sensitivity: number | undefined,
    input: Tensor,
    frame: I420Input,
    wholeFrame: () => void,
  ): Promise<boolean> {
    const [, height, width] = input.shape;
    if (sensitivity === 0 || input.shape.length !== 4 || height > MAX_HEIGHT || width > MAX_WIDTH) return false;
    if (frame.width !== width || frame.height !== height || input.shape[3] !== 3) {
      throw new Error('frame-change check: input is not the frame');
    }
    if (!this.has || this.lastWidth !== width || this.lastHeight !== height) {
      this.remember(frame.yuv, frame.matrix, width, height);
      return false;
    }
    const threshold = sensitivity || 0;
    if (this.lastKind === frame.matrix) {
      const bound = i420DiffBound(frame.yuv, this.last, width, height, frame.matrix) / height / width / 255 / 3;
      if (bound * (1 + floatMargin(width * height * 3)) < threshold) {
        this.remember(frame.yuv, frame.matrix, width, height);
        return true;
      }
    }
    wholeFrame();
    const allowed = await this.decide(threshold, input, frame.data, width, height);
    this.remember(frame.yuv, frame.matrix, width, height);
    return allowed;
  }

  /** The exact check of `rgb` against the previous input (which has the same size). */
  private async decide(threshold: number, input: Tensor, rgb: Uint8Array, width: number, height: number) {
    const n = width * height * 3;
    const last = this.lastRgb(n);
    const sum = squaredDifference(rgb, last, n);
    // Human: sum / height / width / 255 / 3 <= threshold, with tfjs's float32 sum.
    const exact = sum / (height || 1) / (width || 1) / 255 / 3;
    const bound = floatMargin(n);
    if (exact * (1 + bound) < threshold) return true;
    if (exact * (1 - bound) > threshold) return false;
    return (await this.tensorRelative(input, last, width, height)) <= threshold;
  }

  /** Human's own computation, on the same float32 values (near the threshold only). */
  private async tensorRelative(input: Tensor, lastRgb: Uint8Array, width: number, height: number): Promise<number> {
    const tf = this.tf;
    const last = tf.tensor(new Float32Array(lastRgb.subarray(0, width * height * 3)), input.shape, 'float32');
    const diff = tf.sub(input, last);
    const squared = tf.mul(diff, diff);
    const sum = tf.sum(squared);
    try {
      return (await sum.data())[0] / (height || 1) / (width || 1) / 255 / 3;
    } finally {
      for (const t of [last, diff, squared, sum]) t.dispose();
    }
  }

  /** The previous input's RGB (converted into a scratch buffer when it was an I420 frame). */
  private lastRgb(n: number): Uint8Array {
    if (this.lastKind === 'rgb') return this.last;
    if (this.lastRgbScratch.length < n) this.lastRgbScratch = new Uint8Array(n);
    const w = this.lastWidth;
    const h = this.lastHeight;
    i420ToRgbRegion(this.last, w, h, this.lastKind, this.lastRgbScratch, 0, 0, w, h);
    return this.lastRgbScratch;
  }

  private remember(bytes: Uint8Array, kind: 'rgb' | YuvMatrix, width: number, height: number): void {
    const n = kind === 'rgb' ? width * height * 3 : i420Bytes(width, height);
    if (this.last.length < n) this.last = new Uint8Array(n);
    this.last.set(bytes.subarray(0, n));
    this.lastKind = kind;
    this.lastWidth = width;
    this.lastHeight = height;
    this.has = true;
  }
}

/**
 * Relative margin within which tfjs's float32 sum of n non-negative terms may differ from the exact
 * one (any summation order: within n·2^-24 of it), plus a little for the divisions.
 */
const floatMargin = (n: number): number => (n * 2 ** -24) / (1 - n * 2 ** -24) + 1e-9;

/** d² for every byte difference d (index d + 255). */
const SQUARES = Int32Array.from({ length: 511 }, (_, i) => (i - 255) * (i - 255));

/** Sum of the squared differences of the first `n` bytes of `a` and `b`, exactly. */
export function squaredDifference(a: Uint8Array, b: Uint8Array, n: number): number {
  return sumOfTable(a, 0, b, 0, n, SQUARES);
}
