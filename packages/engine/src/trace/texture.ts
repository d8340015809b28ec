// Crop texture energy, a reference for video-codec artifacts. Low-bitrate encoders change the
// quantiser from frame to frame (rate control, the P/B-frame cadence, keyframes), which sharpens
// and blurs the whole picture periodically; the skin's mean colour follows those steps and the
// spectrum shows them as narrow peaks in the heart-rate band. Texture, the mean absolute
// difference between neighbouring green samples of the whole crop, measures that sharpness. It is
// not free of pulse (at the face's edge the pulse changes the contrast between skin and
// background), so the chain does not regress it out of the skin channels (that distorts the pulse
// of a clean capture); it only down-weights the frequencies where the texture itself peaks over the
// capture (rate/capture-rate.ts), after the reference-signal idea of Li et al., CVPR 2014.

const SIDE = 36;

/**
 * Mean absolute green difference between horizontal neighbours on even rows and vertical
 * neighbours on even columns of the 36x36x3 crop (half the pairs: the statistic is global, so
 * half the cost), plus 1. Math.abs, not a conditional negation: the sign of a neighbour
 * difference is a coin toss, and the mispredicted branch tripled the cost (integer sums: the same
 * result either way).
 */
export function cropTexture(pixels: Uint8Array): number {
  let s = 0;
  for (let y = 0; y < SIDE; y += 2) {
    let j = y * SIDE * 3 + 1;
    for (let x = 0; x < SIDE - 1; x++, j += 3) s += Math.abs(pixels[j] - pixels[j + 3]);
  }
  for (let y = 0; y < SIDE - 1; y++) {
    let j = y * SIDE * 3 + 1;
    for (let x = 0; x < SIDE; x += 2, j += 6) s += Math.abs(pixels[j] - pixels[j + SIDE * 3]);
  }
  return s / (SIDE * (SIDE - 1)) + 1;
}
