// The per-pixel sums of every crop, in one place: the skin-weighted channel sums of the trace
// (skin-trace.ts), the background reference's channel sums and the face region's exposure sums
// (exposure.ts). They are the engine's widest per-frame loops (docs/benchmarks.md, Engine), so they
// run in a small WebAssembly SIMD kernel (pixel-sums.wat) where the runtime has one, and in plain
// JavaScript otherwise. Weights are 15-bit integers and every sum is an integer below 2^53, so
// both give the same figures bit for bit, in any order of addition: a trace does not depend on which
// ran (tested), and the streaming and offline estimators stay identical. The same kernel runs the
// skin colour model's refresh (skinFrame), with the JavaScript loop's own f64 arithmetic.
import { CROP_PIXELS } from './face-prior.js';
import { CLIPPED_LEVEL, faceExposureOffsets } from './exposure.js';
import { PIXEL_SUMS_WASM } from './pixel-sums-wasm.js';
import { layout, PHASES } from './skin-layout.js';

/** Largest pixel weight: 15 bits, so a kernel lane's 32-bit sum cannot overflow (pixel-sums.wat). */
export const WEIGHT_ONE = 32767;

/** Weighted chromaticity and luma sums of one refresh of the skin colour model (skin-trace.ts `refresh`). */
export interface RefreshSums {
  rs: number;
  rr: number;
  rg: number;
  ry: number;
}

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

// Kernel memory (one 64 KiB page): the crop, the skin weights, the two fixed masks, the results,
// the refresh's slot tables (skin-layout.ts: slotByte, slotCrop, slotPrior) and one phase's smoothed
// image; pixel-sums.wat keeps its swizzle masks at 65280 and reads the slot tables at these offsets.
const PIX = 0;
const SKIN_W = 4096;
const BG_W = 8192;
const FACE_W = 12288;
const OUT = 16384;
const REFRESH_OUT = 16448;
const SLOT_BYTE = 20480;
const SLOT_CROP = 26624;
const SLOT_PRIOR = 32768;
const IMAGE = 40960;
const GROUPS = CROP_PIXELS / 8;

/** The kernel of one thread: cropSums, and a frame's refresh with its sums, in its memory. */
interface Kernel {
  sums(pixels: Uint8Array, weights: Uint16Array, out: CropSums): CropSums;
  frame: SkinFrame;
}

/** skinFrame's signature. */
type SkinFrame = (
  pixels: Uint8Array,
  weights: Uint16Array,
  image: Float32Array,
  phase: number,
  model: SkinModel,
  refreshed: RefreshSums,
  out: CropSums,
) => CropSums;

/** The colour model's parameters for one refresh (skin-trace.ts). */
export interface SkinModel {
  refR: number;
  refG: number;
  refLuma: number;
  /** R + G + B + 1 within [plateauLo, plateauHi]: the luma gate is exactly 1. */
  plateauLo: number;
  plateauHi: number;
  /** How far a smoothed pixel moves towards the crop's per refresh. */
  alpha: number;
  /** 1 / the chromaticity kernel's squared radius. */
  invChromaRadius2: number;
}

let kernel: Kernel | null | undefined;

/** The kernel, instantiated once per thread; null where WebAssembly or its SIMD is unavailable (or barred by a page's policy). */
function cropKernel(): Kernel | null {
  if (kernel !== undefined) return kernel;
  kernel = null;
  const wasm = (globalThis as { WebAssembly?: typeof WebAssembly }).WebAssembly;
  if (!wasm || !Number.isInteger(GROUPS) || GROUPS > 256 || layout().groupImage[PHASES] > 3 * (CROP_PIXELS + PHASES))
    return kernel;
  try {
    const instance = new wasm.Instance(new wasm.Module(PIXEL_SUMS_WASM), {});
    kernel = bindKernel(instance);
  } catch {
    kernel = null; // no SIMD (an old engine) or a policy without 'wasm-unsafe-eval': the scalar path
  }
  return kernel;
}

function bindKernel(instance: WebAssembly.Instance): Kernel {
  const memory = instance.exports.memory as WebAssembly.Memory;
  const sums = instance.exports.sums as (pix: number, w: number, groups: number, out: number) => void;
  const refresh = instance.exports.refresh as (
    pix: number,
    w: number,
    img: number,
    len: number,
    t0: number,
    refR: number,
    refG: number,
    refLuma: number,
    lo: number,
    hi: number,
    alpha: number,
    invR2: number,
    out: number,
  ) => void;
  const bytes = new Uint8Array(memory.buffer);
  const u16 = new Uint16Array(memory.buffer);
  const f64 = new Float64Array(memory.buffer);
  const L = layout();
  const bg = maskOf(L.bgByte);
  const face = maskOf(faceExposureOffsets());
  const [bg0, bg1] = groupRange(bg);
  const [face0, face1] = groupRange(face);
  u16.set(bg, BG_W / 2);
  u16.set(face, FACE_W / 2);
  // The slot tables by phase, each phase from its image block's start / 3 and padded to an even
  // length (skin-layout.ts groupStride) with a slot of prior 0 whose weight lands past the crop's.
  const slotByte = new Int32Array(memory.buffer, SLOT_BYTE, CROP_PIXELS + PHASES);
  const slotCrop = new Int32Array(memory.buffer, SLOT_CROP, CROP_PIXELS + PHASES);
  const slotPrior = new Float32Array(memory.buffer, SLOT_PRIOR, CROP_PIXELS + PHASES);
  for (let p = 0; p < PHASES; p++) {
    const t0 = L.groupImage[p] / 3;
    const q0 = L.groupStart[p];
    for (let i = 0; i < L.groupStride[p]; i++) {
      const real = q0 + i < L.groupStart[p + 1];
      slotByte[t0 + i] = real ? L.slotByte[q0 + i] : 0;
      slotCrop[t0 + i] = real ? L.slotCrop[q0 + i] : CROP_PIXELS;
      slotPrior[t0 + i] = real ? L.slotPrior[q0 + i] : 0;
    }
  }
  // Each phase's image block in the kernel's memory, and the weights it refreshed.
  const image = new Float32Array(memory.buffer, IMAGE, L.groupImage[PHASES]);
  const blocks = Array.from({ length: PHASES }, (_, p) => new Float32Array(memory.buffer, IMAGE, 3 * L.groupStride[p]));
  const weightsOut = new Uint16Array(memory.buffer, SKIN_W, CROP_PIXELS);
  const o = OUT / 8;
  const ro = REFRESH_OUT / 8;
  const cropSumsIn = (pixels: Uint8Array, out: CropSums): CropSums => {
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
  return {
    sums(pixels, weights, out) {
      bytes.set(pixels, PIX);
      u16.set(weights, SKIN_W / 2);
      return cropSumsIn(pixels, out);
    },
    frame(pixels, weights, img, phase, m, refreshed, out) {
      const at = L.groupImage[phase];
      const block = blocks[phase];
      bytes.set(pixels, PIX);
      u16.set(weights, SKIN_W / 2);
      image.set(img.subarray(at, at + block.length));
      refresh(
        PIX,
        SKIN_W,
        IMAGE,
        L.groupStride[phase],
        at / 3,
        m.refR,
        m.refG,
        m.refLuma,
        m.plateauLo,
        m.plateauHi,
        m.alpha,
        m.invChromaRadius2,
        REFRESH_OUT,
      );
      img.set(block, at);
      weights.set(weightsOut);
      refreshed.rs = f64[ro];
      refreshed.rr = f64[ro + 1];
      refreshed.rg = f64[ro + 2];
      refreshed.ry = f64[ro + 3];
      return cropSumsIn(pixels, out);
    },
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

/** Whether the WebAssembly kernel (cropSums, skinFrame) runs in this thread. */
export function cropSumsAccelerated(): boolean {
  return cropKernel() !== null;
}

/** Turns the kernel off (the plain loops, as where WebAssembly is barred) or back on: for tests and benchmarks. */
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
  return k.sums(pixels, weights, out);
}

/**
 * One frame of the skin trace in the kernel (only where cropSumsAccelerated): the colour model's
 * refresh of one phase's slots (skin-trace.ts `refresh`: `image` and `weights` updated in place,
 * the refresh's sums in `refreshed`), then cropSums of the crop under the refreshed weights. The
 * same figures as those two in plain JavaScript, bit for bit.
 */
export const skinFrame: SkinFrame = (pixels, weights, image, phase, model, refreshed, out) =>
  cropKernel()!.frame(pixels, weights, image, phase, model, refreshed, out);
