// The per-pixel sums of every crop, in one place: the skin-weighted channel sums of the trace
// (skin-trace.ts), the background reference's channel sums and the face region's exposure sums
// (exposure.ts). They are the engine's widest per-frame loops (docs/benchmarks.md, Engine), so they
// run in a small WebAssembly SIMD kernel (pixel-sums.wat) where the runtime has one, and in plain
// JavaScript otherwise. Weights are 15-bit integers and every sum is an integer below 2^53, so
// both give the same figures bit for bit, in any order of addition: a trace does not depend on which
// ran (tested), and the streaming and offline estimators stay identical.
import { CROP_PIXELS } from './face-prior.js';
import { CLIPPED_LEVEL, faceExposureOffsets } from './exposure.js';
import { PIXEL_SUMS_WASM } from './pixel-sums-wasm.js';
import { layout } from './skin-layout.js';

/** Largest pixel weight: 15 bits, so a kernel lane's 32-bit sum cannot overflow (pixel-sums.wat). */
export const WEIGHT_ONE = 32767;

/** Sums over one crop. Channel sums are integers; divide by the weight or pixel count for means. */
export interface CropSums {
  /** Σ w·R, Σ w·G, Σ w·B and Σ w over the crop under the skin weights. */
  skinR: number;
  skinG: number;
  skinB: number;
  skinW: number;
  /** Channel sums over the background reference pixels (layout().bgByte). */
  bgR: number;
  bgG: number;
  bgB: number;
  /** Channel sums over the face-region exposure pixels (faceExposureOffsets()), and how many of them have a clipped channel. */
  faceR: number;
  faceG: number;
  faceB: number;
  faceClipped: number;
}

export function createCropSums(): CropSums {
  return {
    skinR: 0,
    skinG: 0,
    skinB: 0,
    skinW: 0,
    bgR: 0,
    bgG: 0,
    bgB: 0,
    faceR: 0,
    faceG: 0,
    faceB: 0,
    faceClipped: 0,
  };
}

/** Plain JavaScript sums: the reference the kernel equals, and the path when WebAssembly SIMD is missing. */
export function cropSumsScalar(pixels: Uint8Array, weights: Uint16Array, out: CropSums): CropSums {
  const L = layout();
  const byte = L.byte;
  const crop = L.crop;
  let ws = 0;
  let sr = 0;
  let sg = 0;
  let sb = 0;
  for (let k = 0; k < L.n; k++) {
    const j = byte[k];
    const w = weights[crop[k]];
    ws += w;
    sr += w * pixels[j];
    sg += w * pixels[j + 1];
    sb += w * pixels[j + 2];
  }
  out.skinR = sr;
  out.skinG = sg;
  out.skinB = sb;
  out.skinW = ws;
  channelSums(pixels, L.bgByte, out, 0);
  channelSums(pixels, faceExposureOffsets(), out, 1);
  out.faceClipped = clippedCount(pixels, faceExposureOffsets());
  return out;
}

function channelSums(pixels: Uint8Array, idx: Int32Array, out: CropSums, which: 0 | 1): void {
  let r = 0;
  let g = 0;
  let b = 0;
  for (let k = 0; k < idx.length; k++) {
    const j = idx[k];
    r += pixels[j];
    g += pixels[j + 1];
    b += pixels[j + 2];
  }
  if (which === 0) {
    out.bgR = r;
    out.bgG = g;
    out.bgB = b;
  } else {
    out.faceR = r;
    out.faceG = g;
    out.faceB = b;
  }
}

function clippedCount(pixels: Uint8Array, idx: Int32Array): number {
  let clipped = 0;
  for (let k = 0; k < idx.length; k++) {
    const j = idx[k];
    if (pixels[j] >= CLIPPED_LEVEL || pixels[j + 1] >= CLIPPED_LEVEL || pixels[j + 2] >= CLIPPED_LEVEL) clipped++;
  }
  return clipped;
}

// Kernel memory (one 64 KiB page): the crop, the skin weights, the two fixed masks, the results;
// pixel-sums.wat keeps its swizzle masks at 65280.
const PIX = 0;
const SKIN_W = 4096;
const BG_W = 8192;
const FACE_W = 12288;
const OUT = 16384;
const GROUPS = CROP_PIXELS / 8;

/** The crop sums kernel of one thread: cropSums with the crop and its weights copied into its memory. */
type CropKernel = (pixels: Uint8Array, weights: Uint16Array, out: CropSums) => CropSums;

let kernel: CropKernel | null | undefined;

/** The kernel, instantiated once per thread; null where WebAssembly or its SIMD is unavailable (or barred by a page's policy). */
function cropKernel(): CropKernel | null {
  if (kernel !== undefined) return kernel;
  kernel = null;
  const wasm = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
  if (!wasm || !Number.isInteger(GROUPS) || GROUPS > 256) return kernel;
  try {
    const instance = new wasm.Instance(new wasm.Module(PIXEL_SUMS_WASM), {});
    kernel = bindKernel(instance);
  } catch {
    kernel = null; // no SIMD (an old engine) or a policy without 'wasm-unsafe-eval': the scalar path
  }
  return kernel;
}

function bindKernel(instance: WebAssembly.Instance): CropKernel {
  const memory = instance.exports.memory as WebAssembly.Memory;
  const sums = instance.exports.sums as (pix: number, w: number, groups: number, out: number) => void;
  const bytes = new Uint8Array(memory.buffer);
  const u16 = new Uint16Array(memory.buffer);
  const f64 = new Float64Array(memory.buffer);
  const bg = maskOf(layout().bgByte);
  const face = maskOf(faceExposureOffsets());
  const [bg0, bg1] = groupRange(bg);
  const [face0, face1] = groupRange(face);
  u16.set(bg, BG_W / 2);
  u16.set(face, FACE_W / 2);
  const o = OUT / 8;
  return (pixels, weights, out) => {
    bytes.set(pixels, PIX);
    u16.set(weights, SKIN_W / 2);
    sums(PIX, SKIN_W, GROUPS, OUT);
    out.skinR = f64[o];
    out.skinG = f64[o + 1];
    out.skinB = f64[o + 2];
    out.skinW = f64[o + 3];
    const max = f64[o + 4];
    sums(PIX + 24 * bg0, BG_W + 16 * bg0, bg1 - bg0, OUT);
    out.bgR = f64[o];
    out.bgG = f64[o + 1];
    out.bgB = f64[o + 2];
    sums(PIX + 24 * face0, FACE_W + 16 * face0, face1 - face0, OUT);
    out.faceR = f64[o];
    out.faceG = f64[o + 1];
    out.faceB = f64[o + 2];
    // No byte of the crop reaches the clipping level: no face pixel is clipped (the common case).
    out.faceClipped = max < CLIPPED_LEVEL ? 0 : clippedCount(pixels, faceExposureOffsets());
    return out;
  };
}

/** Weight 1 on the pixels at the given byte offsets, 0 elsewhere. */
function maskOf(idx: Int32Array): Uint16Array {
  const m = new Uint16Array(CROP_PIXELS);
  for (let k = 0; k < idx.length; k++) m[idx[k] / 3] = 1;
  return m;
}

/** The groups of eight pixels from the first to the last that has a weight: [first, end). */
function groupRange(weights: Uint16Array): [number, number] {
  let first = weights.length;
  let last = -1;
  for (let i = 0; i < weights.length; i++) {
    if (weights[i] === 0) continue;
    first = Math.min(first, i);
    last = i;
  }
  return last < 0 ? [0, 0] : [Math.floor(first / 8), Math.floor(last / 8) + 1];
}

/** Whether crops are summed by the WebAssembly kernel in this thread. */
export function cropSumsAccelerated(): boolean {
  return cropKernel() !== null;
}

/** Turns the kernel off (the scalar path, as where WebAssembly is barred) or back on: for tests and benchmarks. */
export function useCropSumsKernel(on: boolean): void {
  kernel = on ? undefined : null;
}

/**
 * Sums of one 36x36 RGB crop: skin-weighted (`weights`: one integer ≤ WEIGHT_ONE per crop pixel,
 * zero where the face prior is zero), background and face exposure. The same figures as
 * cropSumsScalar, faster.
 */
export function cropSums(pixels: Uint8Array, weights: Uint16Array, out: CropSums): CropSums {
  const k = cropKernel();
  if (k === null || pixels.length !== 3 * CROP_PIXELS || weights.length !== CROP_PIXELS)
    return cropSumsScalar(pixels, weights, out);
  return k(pixels, weights, out);
}
