// Facial-region prior for a 36x36 face-box crop with no padding (spec, "Streaming protocol", crop
// rule). Forehead and cheeks carry the strongest rPPG signal while eyes, brows, mouth and the box
// corners (hair, background) carry none: Kwon et al., "ROI analysis for remote photoplethysmography
// on facial video", EMBC 2015; Lempe et al., "ROI selection for remote photoplethysmography",
// Bildverarbeitung für die Medizin 2013. The vitallens-core face ROI (`src/geometry/roi.rs`)
// shrinks the box 20 % each side and 10 % top and bottom; here that is a soft weight, not a cut.

export const CROP_SIDE = 36;
export const CROP_PIXELS = CROP_SIDE * CROP_SIDE;

function smoothstep(e0: number, e1: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - e0) / (e1 - e0)));
  return t * t * (3 - 2 * t);
}

/** Prior weight in [0,1] for the pixel at normalised position (u, v), both in (0,1), v downward. */
export function facePriorAt(u: number, v: number): number {
  const du = (u - 0.5) / 0.44;
  const dv = (v - 0.54) / 0.5;
  const r = Math.sqrt(du * du + dv * dv);
  let w = 1 - smoothstep(0.75, 1.0, r); // soft face ellipse: corners and box edges fade out
  const ax = Math.abs(u - 0.5);
  // Eyes and brows: a horizontal band either side of the nose bridge.
  const eyeBand = smoothstep(0.26, 0.31, v) * (1 - smoothstep(0.47, 0.52, v));
  w *= 1 - 0.8 * eyeBand * smoothstep(0.07, 0.12, ax);
  // Mouth and lips.
  const mouth = smoothstep(0.7, 0.74, v) * (1 - smoothstep(0.88, 0.92, v)) * (1 - smoothstep(0.16, 0.22, ax));
  w *= 1 - 0.7 * mouth;
  // Top strip (hairline) and chin/jaw edge.
  w *= 0.35 + 0.65 * smoothstep(0.04, 0.12, v);
  w *= 0.5 + 0.5 * (1 - smoothstep(0.9, 0.98, v));
  return w;
}

let cached: Float32Array | null = null;

/** The 36x36 prior, row-major, computed once. */
export function facePrior(): Float32Array {
  if (cached) return cached;
  const p = new Float32Array(CROP_PIXELS);
  for (let y = 0; y < CROP_SIDE; y++) {
    for (let x = 0; x < CROP_SIDE; x++) {
      p[y * CROP_SIDE + x] = facePriorAt((x + 0.5) / CROP_SIDE, (y + 0.5) / CROP_SIDE);
    }
  }
  cached = p;
  return p;
}
