// Unweighted means over a crop: the background reference of the skin-weighted trace
// (skin-trace.ts) and the plain 3-channel mean.
import type { SkinSample } from './skin-trace-state.js';

/**
 * Mean of the box's top corners outside the face ellipse (background and hair). With no padding these are never skin, so whatever they share with the skin
 * trace is not pulse: illumination changes and codec pumping (background-reference.ts).
 */
export function backgroundMean(pixels: Uint8Array, idx: Int32Array, out: SkinSample): void {
  let r = 0;
  let g = 0;
  let b = 0;
  for (let k = 0; k < idx.length; k++) {
    const j = idx[k];
    r += pixels[j];
    g += pixels[j + 1];
    b += pixels[j + 2];
  }
  const n = Math.max(1, idx.length);
  out.bgR = r / n;
  out.bgG = g / n;
  out.bgB = b / n;
}

/** Plain mean of a crop's three channels (the reference for speed ratios and for skin patches). */
export function meanRgb(pixels: Uint8Array): { r: number; g: number; b: number } {
  let r = 0;
  let g = 0;
  let b = 0;
  const n = pixels.length / 3;
  for (let j = 0; j < pixels.length; j += 3) {
    r += pixels[j];
    g += pixels[j + 1];
    b += pixels[j + 2];
  }
  return { r: r / n, g: g / n, b: b / n };
}
