// Exposure of the face in a crop, for the quality reasons (quality/reasons.ts): mean luma and the
// share of clipped pixels over the face region (the facial prior at least 0.5: the face ellipse
// without the box corners, so a bright window behind the head does not count as a washed-out face).
// Every third face pixel is read (about 300 of the crop's 1296): the figures are medians over many
// frames. The sums are taken with the skin trace's (pixel-sums.ts).
import { CROP_PIXELS, facePrior } from './face-prior.js';

/** A channel at or above this 8-bit level is taken as clipped (sensor or codec saturation). */
export const CLIPPED_LEVEL = 250;

/** One face pixel in this many is read. */
const SUBSAMPLE = 3;

let faceOffsets: Int32Array | null = null;

/** Byte offsets of the face-region pixels read for exposure, computed once. */
export function faceExposureOffsets(): Int32Array {
  if (faceOffsets) return faceOffsets;
  const prior = facePrior();
  const idx: number[] = [];
  let face = 0;
  for (let k = 0; k < CROP_PIXELS; k++) if (prior[k] >= 0.5 && face++ % SUBSAMPLE === 0) idx.push(3 * k);
  faceOffsets = Int32Array.from(idx);
  return faceOffsets;
}

export interface Exposure {
  /** Mean Rec. 601 luma of the face region, 0..255. */
  luma: number;
  /** Share of face-region pixels with a channel at or above CLIPPED_LEVEL, 0..1. */
  clipped: number;
}

/** Exposure from the face region's channel sums and its count of clipped pixels (pixel-sums.ts). */
export function exposureFromSums(r: number, g: number, b: number, clipped: number, out: Exposure): Exposure {
  const n = faceExposureOffsets().length;
  out.luma = (0.299 * r + 0.587 * g + 0.114 * b) / n;
  out.clipped = clipped / n;
  return out;
}
