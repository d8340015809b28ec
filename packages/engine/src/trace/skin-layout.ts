// Index tables for the skin-weighted trace (skin-trace.ts): which crop pixels the face prior
// covers (face-prior.ts, after Kwon et al. 2015 and Lempe et al. 2013), the interleaved refresh
// order of the colour model, and the background reference pixels (the crop's top corners outside
// the face ellipse, after Li et al., CVPR 2014). Computed once; shared by every trace state.
import { CROP_PIXELS, facePrior } from './face-prior.js';

/** Interleaved refresh phases: each covered pixel's colour model is refreshed every PHASES frames. */
export const PHASES = 4;

/**
 * Index tables shared by every state (computed once from the prior). Only the pixels with a
 * positive prior can ever carry weight (about 2/3 of the crop), so the per-frame loops visit those
 * only, in the same order as a scan of the whole crop: every floating-point sum adds the same terms
 * in the same order, so the samples are bit-identical to scanning all 1296 pixels.
 */
export interface Layout {
  /** Covered pixels (prior > 0). */
  n: number;
  /** Byte offset (3·pixel) of covered pixel k, pixels ascending. */
  byte: Int32Array;
  /** Prior of covered pixel k. */
  prior: Float32Array;
  /** Refresh order: phase 0's covered pixels ascending, then phase 1's, …; slots [groupStart[p], groupStart[p+1]). */
  groupStart: Int32Array;
  /** Byte offset of the pixel in refresh slot q. */
  slotByte: Int32Array;
  /** Refresh slot of covered pixel k. */
  pixelSlot: Int32Array;
  /** Byte offsets of the background reference pixels (backgroundMean). */
  bgByte: Int32Array;
  /** Sum of the prior over the whole crop, in pixel order. */
  priorTotal: number;
  /** Prior of the pixel in refresh slot q. */
  slotPrior: Float32Array;
  /** Crop pixel index (byte offset / 3) of the pixel in refresh slot q. */
  slotCrop: Int32Array;
  /** Crop pixel index of covered pixel k. */
  crop: Int32Array;
  /**
   * The smoothed image (SkinTraceState.image) by phase: phase p's slots [groupStart[p],
   * groupStart[p+1]) are one block from groupImage[p], three planes (R, G, B) of groupStride[p]
   * values each: the group's length rounded up to even (the kernel refreshes two slots a step; a
   * plane's last value is unused when the length is odd), so one phase's refresh reads and writes
   * one contiguous block. groupImage[PHASES] is the image's length.
   */
  groupImage: Int32Array;
  groupStride: Int32Array;
  /** Where the image keeps slot q's red value; green is slotStride[q] further, blue 2·slotStride[q]. */
  slotImage: Int32Array;
  /** groupStride of slot q's phase. */
  slotStride: Int32Array;
}

let layoutCache: Layout | null = null;

export function layout(): Layout {
  if (layoutCache) return layoutCache;
  const prior = facePrior();
  const covered: number[] = [];
  for (let i = 0; i < CROP_PIXELS; i++) if (prior[i] > 0) covered.push(i);
  const n = covered.length;
  const byte = Int32Array.from(covered, (i) => 3 * i);
  const pr = Float32Array.from(covered, (i) => prior[i]);
  const groupStart = new Int32Array(PHASES + 1);
  const slotByte = new Int32Array(n);
  const slotPixel = new Int32Array(n);
  const pixelSlot = new Int32Array(n);
  let q = 0;
  for (let ph = 0; ph < PHASES; ph++) {
    groupStart[ph] = q;
    for (let k = 0; k < n; k++) {
      if (covered[k] % PHASES !== ph) continue;
      slotByte[q] = 3 * covered[k];
      slotPixel[q] = k;
      pixelSlot[k] = q;
      q++;
    }
  }
  groupStart[PHASES] = q;
  const groupImage = new Int32Array(PHASES + 1);
  const groupStride = new Int32Array(PHASES);
  const slotImage = new Int32Array(n);
  const slotStride = new Int32Array(n);
  for (let ph = 0; ph < PHASES; ph++) {
    const a = groupStart[ph];
    const len = groupStart[ph + 1] - a;
    const stride = len + (len & 1);
    groupStride[ph] = stride;
    groupImage[ph + 1] = groupImage[ph] + 3 * stride;
    for (let s = a; s < a + len; s++) {
      slotImage[s] = groupImage[ph] + (s - a);
      slotStride[s] = stride;
    }
  }
  let total = 0;
  for (let i = 0; i < prior.length; i++) total += prior[i];
  layoutCache = {
    n,
    byte,
    prior: pr,
    groupStart,
    slotByte,
    pixelSlot,
    bgByte: backgroundBytes(prior),
    priorTotal: total,
    slotPrior: Float32Array.from(slotPixel, (k) => pr[k]),
    slotCrop: Int32Array.from(slotByte, (j) => j / 3),
    crop: Int32Array.from(covered),
    groupImage,
    groupStride,
    slotImage,
    slotStride,
  };
  return layoutCache;
}

/**
 * The background reference: the box's two top 6x6 corners outside the face ellipse (where the prior
 * is zero): hair and background. The sides and bottom corners are left out: at cheek and jaw height
 * they often hold the face's edge or the neck, which pulse.
 */
function backgroundBytes(prior: Float32Array): Int32Array {
  const idx: number[] = [];
  const side = Math.round(Math.sqrt(prior.length));
  const c = Math.round(side / 6);
  for (let i = 0; i < prior.length; i++) {
    const x = i % side;
    const y = (i - x) / side;
    const corner = (x < c || x >= side - c) && y < c;
    if (corner && prior[i] <= 1e-3) idx.push(3 * i);
  }
  return Int32Array.from(idx);
}
