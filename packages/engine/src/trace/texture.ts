// Texture energy of the crop's background corners, a reference for video-codec artifacts.
// Low-bitrate encoders change the quantiser from frame to frame (rate control, the P/B-frame
// cadence, keyframes), which sharpens and blurs the whole picture periodically; the skin's mean
// colour follows those steps and the spectrum shows them as narrow peaks in the heart-rate band.
// Texture, the mean absolute difference between neighbouring green samples, measures that
// sharpness. It is taken over the two top 6x6 corners of the crop only (hair and background, outside
// the face ellipse: the same region as the background colour reference in skin-trace.ts), where
// there is no pulse; over the face it would carry the pulse (at the face's edge the pulse changes
// the contrast between skin and background, and a clean capture's texture is mostly that). The
// chain down-weights the frequencies where it peaks over the capture (rate/capture-rate.ts), after
// the reference-signal idea of Li et al., CVPR 2014.

const SIDE = 36;
/** Corner size: the two top SIDE/6 squares, as the background colour reference. */
const C = SIDE / 6;

/** Mean absolute green difference between 4-neighbours inside the two top corners, plus 1. */
export function cropTexture(pixels: Uint8Array): number {
  // The two corners in turn, the same sums in the same order (no array literal per frame).
  const s = cornerTexture(pixels, 0, 0);
  return cornerTexture(pixels, SIDE - C, s) / (2 * 2 * C * (C - 1)) + 1;
}

/** `s` plus the absolute green differences inside the corner whose left column is x0. */
function cornerTexture(pixels: Uint8Array, x0: number, s: number): number {
  for (let y = 0; y < C; y++) {
    let j = (y * SIDE + x0) * 3 + 1;
    for (let x = 0; x < C; x++, j += 3) {
      if (x < C - 1) s += Math.abs(pixels[j] - pixels[j + 3]);
      if (y < C - 1) s += Math.abs(pixels[j] - pixels[j + SIDE * 3]);
    }
  }
  return s;
}
