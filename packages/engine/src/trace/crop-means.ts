// The plain 3-channel mean of a crop (the background reference's and the skin trace's sums are in
// pixel-sums.ts).

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
