/**
 * The video pipeline's face crop straight from the decoder's I420 planes (issue 18): the 36x36 RGB
 * crop that `cropResizeRgb` makes of the frame's RGB, bit for bit, in a WebAssembly SIMD kernel
 * (yuv-crop.wat) that converts only the crop's rows and columns and sums them as it goes, so the
 * tracked frames between two face analyses (seven of eight) never become RGB. Where the kernel
 * cannot run (no WebAssembly SIMD, a span whose sums could pass 32 bits, a box whose rows would
 * grow its memory past MAX_MEMORY_BYTES or that the engine refuses to grow) `i420CropRgb` returns
 * null and the caller converts the region and crops in JavaScript as before.
 */
import { CROP_SIZE, cropSpans, type Box } from '@vitals/protocol';
import { yuvCoefficients, type YuvMatrix } from './yuv-matrix.js';
import { YUV_CROP_WASM } from './yuv-crop-wasm.js';

type CropFn = (
  y: number,
  u: number,
  v: number,
  w: number,
  h: number,
  row0: number,
  cx0: number,
  cx1: number,
  xs: number,
  ys: number,
  acc: number,
  out: number,
  yc: number,
  vr: number,
  ug: number,
  vg: number,
  ub: number,
) => void;

/** What this module uses of the WebAssembly API (the package is typed without the DOM's lib). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

interface Kernel {
  memory: WasmMemory;
  crop: CropFn;
  /** Views of the memory (made again when it grows). */
  bytes: Uint8Array;
  i32: Int32Array;
}

const OUT_BYTES = CROP_SIZE * CROP_SIZE * 3;
// Kernel memory: the crop, the two span tables, then the column sums and the planes' rows (laid out
// per call; the memory grows when a frame needs more).
const OUT = 0;
const XS = 4096;
const YS = XS + 8 * CROP_SIZE;
const ACC = 8192;
/** Bytes the kernel may read past a plane's last row (its last eight-pixel step). */
const SLACK = 16;
/**
 * The most the kernel's memory grows to (per thread; it never shrinks): the rows of a box across a
 * whole 4096x3072 frame (the probe's cap) need ~19 MB. Beyond it the JavaScript path runs.
 */
const MAX_MEMORY_BYTES = 32 * 1024 * 1024;
/** A span's sum of 8-bit samples stays below 2^31. */
const MAX_SPAN_PIXELS = Math.floor((2 ** 31 - 1) / 255);

let kernel: Kernel | null | undefined;

function load(): Kernel | null {
  if (kernel !== undefined) return kernel;
  kernel = null;
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!wasm) return kernel;
  try {
    const instance = new wasm.Instance(new wasm.Module(YUV_CROP_WASM), {});
    const memory = instance.exports.memory as WasmMemory;
    kernel = {
      memory,
      crop: instance.exports.crop as CropFn,
      bytes: new Uint8Array(memory.buffer),
      i32: new Int32Array(memory.buffer),
    };
  } catch {
    kernel = null; // no WebAssembly SIMD: the JavaScript path
  }
  return kernel;
}

/** Whether the kernel runs in this thread. */
export function i420CropAccelerated(): boolean {
  return load() !== null;
}

/** Turns the kernel off (the JavaScript path) or back on: for tests and benchmarks. */
export function useI420CropKernel(on: boolean): void {
  kernel = on ? undefined : null;
}

const coefficientCache = new Map<YuvMatrix, ReturnType<typeof yuvCoefficients>>();
function coefficients(matrix: YuvMatrix): ReturnType<typeof yuvCoefficients> {
  let c = coefficientCache.get(matrix);
  if (!c) coefficientCache.set(matrix, (c = yuvCoefficients(matrix)));
  return c;
}

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);
const align16 = (n: number): number => (n + 15) & ~15;

/**
 * The CROP_SIZE x CROP_SIZE RGB crop of `box` from an I420 frame (even width and height), equal to
 * `cropResizeRgb` of the frame's RGB (`i420ToRgbRegion`); null where the kernel cannot make it.
 */
export function i420CropRgb(
  yuv: Uint8Array,
  width: number,
  height: number,
  matrix: YuvMatrix,
  box: Box,
  out: Uint8Array = new Uint8Array(OUT_BYTES),
): Uint8Array | null {
  const k = load();
  if (k === null || width % 2 !== 0 || height % 2 !== 0 || out.length !== OUT_BYTES) return null;
  const xs = cropSpans(box.x, box.width, CROP_SIZE, width);
  const ys = cropSpans(box.y, box.height, CROP_SIZE, height);
  let spanW = 0;
  let spanH = 0;
  for (let i = 0; i < CROP_SIZE; i++) {
    spanW = Math.max(spanW, xs[2 * i + 1] - xs[2 * i]);
    spanH = Math.max(spanH, ys[2 * i + 1] - ys[2 * i]);
  }
  if (spanW * spanH > MAX_SPAN_PIXELS) return null;
  // The frame rows and columns the spans read (clamped to the frame; spans are ascending).
  const row0 = clamp(ys[0], 0, height - 1);
  const row1 = clamp(ys[2 * CROP_SIZE - 1] - 1, 0, height - 1);
  const c0 = clamp(xs[0], 0, width - 1);
  const c1 = clamp(xs[2 * CROP_SIZE - 1] - 1, 0, width - 1) + 1;
  const cx0 = c0 & ~7;
  const cx1 = cx0 + (((c1 - cx0 + 7) >> 3) << 3);
  const cw = width >> 1;
  const yBytes = (row1 - row0 + 1) * width;
  const cBytes = ((row1 >> 1) - (row0 >> 1) + 1) * cw;
  const yAt = align16(ACC + 3 * 4 * (cx1 - cx0));
  const uAt = align16(yAt + yBytes + SLACK);
  const vAt = align16(uAt + cBytes + SLACK);
  const end = vAt + cBytes + SLACK;
  if (end > MAX_MEMORY_BYTES) return null;
  const memory = k.memory;
  if (end > memory.buffer.byteLength) {
    try {
      memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
    } catch {
      return null; // the engine would not grow it (out of memory): the JavaScript path
    }
  }
  if (k.bytes.buffer !== memory.buffer) {
    k.bytes = new Uint8Array(memory.buffer);
    k.i32 = new Int32Array(memory.buffer);
  }
  const { bytes, i32 } = k;
  i32.set(xs, XS / 4);
  i32.set(ys, YS / 4);
  const uBase = width * height;
  const vBase = uBase + cw * (height >> 1);
  const cFrom = (row0 >> 1) * cw;
  bytes.set(yuv.subarray(row0 * width, row0 * width + yBytes), yAt);
  bytes.set(yuv.subarray(uBase + cFrom, uBase + cFrom + cBytes), uAt);
  bytes.set(yuv.subarray(vBase + cFrom, vBase + cFrom + cBytes), vAt);
  const c = coefficients(matrix);
  k.crop(yAt, uAt, vAt, width, height, row0, cx0, cx1, XS, YS, ACC, OUT, c.yCoeff, c.vr, c.ug, c.vg, c.ub);
  out.set(bytes.subarray(OUT, OUT + OUT_BYTES));
  return out;
}
