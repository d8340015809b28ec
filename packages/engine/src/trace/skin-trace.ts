// Crop → RGB trace with skin weighting. The weight of each pixel is a facial-region prior
// (face-prior.ts) times a colour-space skin model: a kernel around an adaptive skin reference in
// normalised-rg chromaticity plus a luminance gate relative to the skin's own brightness, after
// Soriano et al., "Adaptive skin color modeling using the skin locus", Pattern Recognition 36,
// 2003 (rg chromaticity is luminance invariant and compact for skin of every tone) and
// Bobbia et al., "Unsupervised skin tissue segmentation for remote photoplethysmography",
// Pattern Recognition Letters 124, 2019 (skin-weighted spatial averaging beats the box mean).
// Weights come from an exponentially smoothed image so the mask does not flicker frame to frame;
// the reference adapts slowly. The state is explicit and owned by the caller, so the streaming and
// offline estimators produce bit-identical traces from the same packets.
import { CROP_PIXELS as CROP_PIXELS_EXPORT, facePrior } from './face-prior.js';

// Module-local copy: hot loops must not go through an imported binding (bundlers and tsx turn
// those into getter calls).
const CROP_PIXELS: number = CROP_PIXELS_EXPORT;

export interface SkinTraceState {
  /** Smoothed crop (RGB, float); each pixel is refreshed every PHASES frames. */
  image: Float32Array;
  /** Current skin weight per pixel (prior × colour model), refreshed with the image. */
  weights: Float32Array;
  refR: number;
  refG: number;
  refLuma: number;
  /** Frames seen; selects which interleaved pixel subset is refreshed. */
  frame: number;
  initialized: boolean;
}

export interface SkinSample {
  r: number;
  g: number;
  b: number;
  /** Sum of skin weights over the sum of prior weights, 0..1: how much of the face looks like skin. */
  skinFraction: number;
  /** Mean RGB of the background reference: the crop's pixels outside the face ellipse (background-reference.ts). */
  bgR: number;
  bgG: number;
  bgB: number;
}

/**
 * The colour model runs on an interleaved quarter of the pixels per frame (every pixel is refreshed
 * every 4 frames, ~133 ms at 30 fps), which keeps the per-frame cost near a plain mean while the
 * mask still follows motion within a fraction of a second.
 */
const PHASES = 4;
/** Image smoothing per refresh (a refresh every 4 frames: time constant ≈ 6 frames). */
const IMAGE_ALPHA = 0.5;
const REF_ALPHA = 0.05;
/** Chromaticity radius (rg units) beyond which a pixel is not skin. */
const CHROMA_RADIUS2 = 0.055 * 0.055;
const INV_CHROMA_RADIUS2 = 1 / CHROMA_RADIUS2;

export function createSkinTraceState(): SkinTraceState {
  return {
    image: new Float32Array(CROP_PIXELS * 3),
    weights: new Float32Array(CROP_PIXELS),
    refR: 0.4,
    refG: 0.32,
    refLuma: 120,
    frame: 0,
    initialized: false,
  };
}

/** Luminance gate relative to the skin reference (shadows, hair, pupils, glare out). */
function lumaGate(luma: number, ref: number): number {
  const q = luma / ref;
  if (q < 0.35 || q > 1.9) return 0;
  if (q < 0.6) return (q - 0.35) * 4;
  if (q > 1.5) return (1.9 - q) * 2.5;
  return 1;
}

/** Skin weight of one smoothed pixel (prior × chroma kernel × luma gate). */
function pixelWeight(R: number, G: number, B: number, prior: number, s: SkinTraceState): number {
  if (R >= 253.5 || G >= 253.5 || B >= 253.5) return 0; // clipped: no pulse survives saturation
  const sum = R + G + B + 1;
  const inv = 1 / sum;
  const dr = R * inv - s.refR;
  const dg = G * inv - s.refG;
  const kc = 1 - (dr * dr + dg * dg) * INV_CHROMA_RADIUS2;
  if (kc <= 0) return 0;
  return prior * kc * lumaGate(sum / 3, s.refLuma);
}

/** Weighted chromaticity and luma of the smoothed image under the current weights. */
function updateReference(s: SkinTraceState, from: number, step: number, alpha: number): void {
  const img = s.image;
  const w = s.weights;
  let ws = 0;
  let cr = 0;
  let cg = 0;
  let cy = 0;
  for (let i = from; i < CROP_PIXELS; i += step) {
    const wi = w[i];
    if (wi <= 0) continue;
    const R = img[3 * i];
    const G = img[3 * i + 1];
    const B = img[3 * i + 2];
    const sum = R + G + B + 1;
    ws += wi;
    cr += (wi * R) / sum;
    cg += (wi * G) / sum;
    cy += (wi * sum) / 3;
  }
  if (ws <= 1e-9) return;
  s.refR += alpha * (cr / ws - s.refR);
  s.refG += alpha * (cg / ws - s.refG);
  s.refLuma = Math.max(8, s.refLuma + alpha * (cy / ws - s.refLuma));
}

function initialize(s: SkinTraceState, pixels: Uint8Array, prior: Float32Array): void {
  for (let i = 0; i < CROP_PIXELS * 3; i++) s.image[i] = pixels[i];
  // Start from the prior alone (squared: the centre of the face), then refine the colour model.
  for (let i = 0; i < CROP_PIXELS; i++) s.weights[i] = prior[i] * prior[i];
  updateReference(s, 0, 1, 1);
  for (let k = 0; k < 3; k++) {
    for (let i = 0; i < CROP_PIXELS; i++) s.weights[i] = pixelWeight(s.image[3 * i], s.image[3 * i + 1], s.image[3 * i + 2], prior[i], s);
    updateReference(s, 0, 1, 1);
  }
  for (let i = 0; i < CROP_PIXELS; i++) s.weights[i] = pixelWeight(s.image[3 * i], s.image[3 * i + 1], s.image[3 * i + 2], prior[i], s);
  s.initialized = true;
}

/**
 * Skin-weighted mean RGB of one 36x36x3 crop (uint8, NHWC). Updates `state`; the same sequence of
 * crops always yields the same sequence of samples.
 */
export function skinWeightedRgb(pixels: Uint8Array, state: SkinTraceState): SkinSample {
  const prior = facePrior();
  if (!state.initialized) initialize(state, pixels, prior);
  const img = state.image;
  const w = state.weights;
  // Refresh one interleaved subset of pixels: image, then weight; the same pass accumulates the
  // subset's weighted chromaticity and luma for the slowly adapting skin reference.
  const phase = state.frame % PHASES;
  state.frame++;
  const refR = state.refR;
  const refG = state.refG;
  const refLuma = state.refLuma;
  let rs = 0;
  let rr = 0;
  let rg = 0;
  let ry = 0;
  for (let i = phase; i < CROP_PIXELS; i += PHASES) {
    const j = 3 * i;
    const R = (img[j] += IMAGE_ALPHA * (pixels[j] - img[j]));
    const G = (img[j + 1] += IMAGE_ALPHA * (pixels[j + 1] - img[j + 1]));
    const B = (img[j + 2] += IMAGE_ALPHA * (pixels[j + 2] - img[j + 2]));
    const pi = prior[i];
    let wi = 0;
    if (pi > 0 && R < 253.5 && G < 253.5 && B < 253.5) {
      const sum = R + G + B + 1;
      const inv = 1 / sum;
      const cr = R * inv;
      const cg = G * inv;
      const dr = cr - refR;
      const dg = cg - refG;
      const kc = 1 - (dr * dr + dg * dg) * INV_CHROMA_RADIUS2;
      if (kc > 0) {
        wi = pi * kc * lumaGate(sum / 3, refLuma);
        if (wi > 0) {
          rs += wi;
          rr += wi * cr;
          rg += wi * cg;
          ry += (wi * sum) / 3;
        }
      }
    }
    w[i] = wi;
  }
  if (rs > 1e-9) {
    state.refR += REF_ALPHA * (rr / rs - state.refR);
    state.refG += REF_ALPHA * (rg / rs - state.refG);
    state.refLuma = Math.max(8, state.refLuma + REF_ALPHA * (ry / rs - state.refLuma));
  }
  let ws = 0;
  let sr = 0;
  let sg = 0;
  let sb = 0;
  for (let i = 0, j = 0; i < CROP_PIXELS; i++, j += 3) {
    const wi = w[i];
    if (wi === 0) continue;
    ws += wi;
    sr += wi * pixels[j];
    sg += wi * pixels[j + 1];
    sb += wi * pixels[j + 2];
  }
  const wp = priorSum(prior);
  const bg = backgroundMean(pixels, prior);
  if (ws > 1e-6) return { r: sr / ws, g: sg / ws, b: sb / ws, skinFraction: Math.min(1, ws / wp), bgR: bg[0], bgG: bg[1], bgB: bg[2] };
  // Nothing looks like skin: fall back to the prior-weighted mean and report it.
  let pr = 0;
  let pg = 0;
  let pb = 0;
  for (let i = 0, j = 0; i < CROP_PIXELS; i++, j += 3) {
    pr += prior[i] * pixels[j];
    pg += prior[i] * pixels[j + 1];
    pb += prior[i] * pixels[j + 2];
  }
  return { r: pr / wp, g: pg / wp, b: pb / wp, skinFraction: 0, bgR: bg[0], bgG: bg[1], bgB: bg[2] };
}

let backgroundIndex: Int32Array | null = null;
const bgOut = new Float64Array(3);

/**
 * Mean of the box's top corners outside the face ellipse (background and hair). With no padding these are never skin, so whatever they share with the skin
 * trace is not pulse: illumination changes and codec pumping (background-reference.ts).
 */
function backgroundMean(pixels: Uint8Array, prior: Float32Array): Float64Array {
  if (!backgroundIndex) {
    const idx: number[] = [];
    // The two top 6x6 corners (outside the face ellipse, where the prior is zero): hair and
    // background. The sides and bottom corners are left out: at cheek and jaw height they often
    // hold the face's edge or the neck, which pulse.
    const side = Math.round(Math.sqrt(prior.length));
    const c = Math.round(side / 6);
    for (let i = 0; i < prior.length; i++) {
      const x = i % side;
      const y = (i - x) / side;
      const corner = (x < c || x >= side - c) && y < c;
      if (corner && prior[i] <= 1e-3) idx.push(i);
    }
    backgroundIndex = Int32Array.from(idx);
  }
  const idx = backgroundIndex;
  let r = 0;
  let g = 0;
  let b = 0;
  for (let k = 0; k < idx.length; k++) {
    const j = 3 * idx[k];
    r += pixels[j];
    g += pixels[j + 1];
    b += pixels[j + 2];
  }
  const n = Math.max(1, idx.length);
  bgOut[0] = r / n;
  bgOut[1] = g / n;
  bgOut[2] = b / n;
  return bgOut;
}

let priorTotal = 0;
function priorSum(prior: Float32Array): number {
  if (priorTotal > 0) return priorTotal;
  let s = 0;
  for (let i = 0; i < prior.length; i++) s += prior[i];
  priorTotal = s;
  return s;
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
