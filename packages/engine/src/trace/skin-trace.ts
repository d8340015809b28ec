// Crop → RGB trace with skin weighting. The weight of each pixel is a facial-region prior
// (face-prior.ts) times a colour-space skin model: a kernel around an adaptive skin reference in
// normalised-rg chromaticity plus a luminance gate relative to the skin's own brightness, after
// Soriano et al., "Adaptive skin color modeling using the skin locus", Pattern Recognition 36,
// 2003 (rg chromaticity is luminance invariant and compact for skin of every tone) and
// Bobbia et al., "Unsupervised skin tissue segmentation for remote photoplethysmography",
// Pattern Recognition Letters 124, 2019 (skin-weighted spatial averaging beats the box mean).
// Weights come from an exponentially smoothed image so the mask does not flicker frame to frame;
// the reference adapts slowly. The state is explicit and owned by the caller (skin-trace-state.ts),
// so the streaming and offline estimators produce bit-identical traces from the same packets.
import { layout, PHASES as PHASES_EXPORT, type Layout } from './skin-layout.js';
import type { SkinSample, SkinTraceState } from './skin-trace-state.js';
import {
  createCropSums,
  cropSums,
  skinFrame,
  cropSumsAccelerated,
  WEIGHT_ONE,
  type CropSums,
  type RefreshSums,
  type SkinModel,
} from './pixel-sums.js';
import { exposureFromSums, type Exposure } from './exposure.js';
import { CROP_PIXELS } from './face-prior.js';

/**
 * The colour model runs on an interleaved quarter of the pixels per frame (every pixel is refreshed
 * every PHASES = 4 frames, ~133 ms at 30 fps), which keeps the per-frame cost near a plain mean while
 * the mask still follows motion within a fraction of a second. (A module-local copy: hot code must
 * not go through an imported binding, which bundlers and tsx turn into getter calls.)
 */
const PHASES: number = PHASES_EXPORT;
/** Image smoothing per refresh (a refresh every 4 frames: time constant ≈ 6 frames). */
const IMAGE_ALPHA = 0.5;
const REF_ALPHA = 0.05;
/** Chromaticity radius (rg units) beyond which a pixel is not skin. */
const CHROMA_RADIUS2 = 0.055 * 0.055;
const INV_CHROMA_RADIUS2 = 1 / CHROMA_RADIUS2;

/** A weight in [0, 1] as the integer the sums use (pixel-sums.ts). */
function quantize(w: number): number {
  return (w * WEIGHT_ONE + 0.5) | 0;
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

/** Weighted chromaticity and luma of the whole smoothed image under the current weights. */
function updateReference(s: SkinTraceState, L: Layout, alpha: number): void {
  const img = s.image;
  const w = s.weights;
  let ws = 0;
  let cr = 0;
  let cg = 0;
  let cy = 0;
  for (let k = 0; k < L.n; k++) {
    const wi = w[L.crop[k]];
    if (wi <= 0) continue;
    const q = L.pixelSlot[k];
    const m = L.slotImage[q];
    const d = L.slotStride[q];
    const R = img[m];
    const G = img[m + d];
    const B = img[m + 2 * d];
    const sum = R + G + B + 1;
    ws += wi;
    cr += (wi * R) / sum;
    cg += (wi * G) / sum;
    cy += (wi * sum) / 3;
  }
  if (ws <= 0) return;
  s.refR += alpha * (cr / ws - s.refR);
  s.refG += alpha * (cg / ws - s.refG);
  s.refLuma = Math.max(8, s.refLuma + alpha * (cy / ws - s.refLuma));
}

function refreshAllWeights(s: SkinTraceState, L: Layout): void {
  const img = s.image;
  for (let k = 0; k < L.n; k++) {
    const q = L.pixelSlot[k];
    const m = L.slotImage[q];
    const d = L.slotStride[q];
    s.weights[L.crop[k]] = quantize(pixelWeight(img[m], img[m + d], img[m + 2 * d], L.prior[k], s));
  }
}

function initialize(s: SkinTraceState, pixels: Uint8Array, L: Layout): void {
  for (let q = 0; q < L.n; q++) {
    const j = L.slotByte[q];
    const m = L.slotImage[q];
    const d = L.slotStride[q];
    s.image[m] = pixels[j];
    s.image[m + d] = pixels[j + 1];
    s.image[m + 2 * d] = pixels[j + 2];
  }
  // Start from the prior alone (squared: the centre of the face), then refine the colour model.
  for (let k = 0; k < L.n; k++) s.weights[L.crop[k]] = quantize(L.prior[k] * L.prior[k]);
  updateReference(s, L, 1);
  for (let it = 0; it < 3; it++) {
    refreshAllWeights(s, L);
    updateReference(s, L, 1);
  }
  refreshAllWeights(s, L);
  s.initialized = true;
}

/**
 * The refresh of slots [q0, q1): each slot's smoothed pixel moves halfway to the crop's, its weight
 * is recomputed, and the refreshed pixels' weighted chromaticity and luma are summed for the skin
 * reference. Where WebAssembly SIMD runs, the kernel's `refresh` (pixel-sums.wat) does the same two
 * slots at a time, with the same figures bit for bit; this loop is the reference and the fallback.
 */
function refresh(
  pixels: Uint8Array,
  state: SkinTraceState,
  L: Layout,
  q0: number,
  q1: number,
  plateauLo: number,
  plateauHi: number,
  out: RefreshSums,
): RefreshSums {
  const img = state.image;
  const w = state.weights;
  const refR = state.refR;
  const refG = state.refG;
  const refLuma = state.refLuma;
  const slotByte = L.slotByte;
  const slotCrop = L.slotCrop;
  const slotPrior = L.slotPrior;
  // The phase's planes (layout.groupImage): R of slot q at m, G at m + d, B at m + 2d.
  const d = L.slotStride[q0];
  const m0 = L.slotImage[q0] - q0;
  let rs = 0;
  let rr = 0;
  let rg = 0;
  let ry = 0;
  for (let q = q0; q < q1; q++) {
    const j = slotByte[q];
    const m = m0 + q;
    // As `img[m] += …` but keeping the unrounded sum, which is what that expression yields.
    const R = img[m] + IMAGE_ALPHA * (pixels[j] - img[m]);
    img[m] = R;
    const G = img[m + d] + IMAGE_ALPHA * (pixels[j + 1] - img[m + d]);
    img[m + d] = G;
    const B = img[m + 2 * d] + IMAGE_ALPHA * (pixels[j + 2] - img[m + 2 * d]);
    img[m + 2 * d] = B;
    let wi = 0;
    if (R < 253.5 && G < 253.5 && B < 253.5) {
      const sum = R + G + B + 1;
      const inv = 1 / sum;
      const cr = R * inv;
      const cg = G * inv;
      const dr = cr - refR;
      const dg = cg - refG;
      const kc = 1 - (dr * dr + dg * dg) * INV_CHROMA_RADIUS2;
      if (kc > 0) {
        wi = sum >= plateauLo && sum <= plateauHi ? slotPrior[q] * kc : slotPrior[q] * kc * lumaGate(sum / 3, refLuma);
        // wi ≥ 0 and cr, cg, sum ≥ 0: a zero weight adds exact zeros, so no test is needed.
        rs += wi;
        rr += wi * cr;
        rg += wi * cg;
        ry += (wi * sum) / 3;
      }
    }
    w[slotCrop[q]] = quantize(wi);
  }
  out.rs = rs;
  out.rr = rr;
  out.rg = rg;
  out.ry = ry;
  return out;
}

/**
 * Skin-weighted mean RGB of one 36x36x3 crop (uint8, NHWC). Updates `state`; the same sequence of
 * crops always yields the same sequence of samples.
 */
export function skinWeightedRgb(pixels: Uint8Array, state: SkinTraceState): SkinSample {
  return { ...skinWeightedRgbInto(pixels, state, scratch) };
}

const scratch: SkinSample = { r: 0, g: 0, b: 0, skinFraction: 0, bgR: 0, bgG: 0, bgB: 0, luma: 0, clipped: 0 };
const sums = createCropSums();
const refreshed: RefreshSums = { rs: 0, rr: 0, rg: 0, ry: 0 };
const exposure: Exposure = { luma: 0, clipped: 0 };
const model: SkinModel = {
  refR: 0,
  refG: 0,
  refLuma: 0,
  plateauLo: 0,
  plateauHi: 0,
  alpha: IMAGE_ALPHA,
  invChromaRadius2: INV_CHROMA_RADIUS2,
};

/** skinWeightedRgb writing into `out` (no allocation per frame); returns `out`. */
export function skinWeightedRgbInto(pixels: Uint8Array, state: SkinTraceState, out: SkinSample): SkinSample {
  const L = layout();
  if (!state.initialized) initialize(state, pixels, L);
  const w = state.weights;
  // Refresh one interleaved subset of pixels: image, then weight; the same pass accumulates the
  // subset's weighted chromaticity and luma for the slowly adapting skin reference.
  const phase = state.frame % PHASES;
  state.frame++;
  const refLuma = state.refLuma;
  // Sums for which lumaGate(sum / 3, refLuma) is certainly 1 (0.6 ≤ q ≤ 1.5 with a 1e-9 relative
  // margin, far wider than the rounding of q = (sum / 3) / refLuma): there prior·kc·1 = prior·kc
  // exactly, so the gate's two divisions are skipped without changing a bit.
  const plateauLo = 3 * refLuma * 0.6 * (1 + 1e-9);
  const plateauHi = 3 * refLuma * 1.5 * (1 - 1e-9);
  const prior = L.prior;
  const q0 = L.groupStart[phase];
  const q1 = L.groupStart[phase + 1];
  // The weighted sums over the whole crop, the background's and the face exposure's, come from the
  // same pass (the kernel, pixel-sums.ts) or right after the refresh (the plain loops).
  let c: CropSums;
  if (pixels.length === 3 * CROP_PIXELS && cropSumsAccelerated()) {
    model.refR = state.refR;
    model.refG = state.refG;
    model.refLuma = refLuma;
    model.plateauLo = plateauLo;
    model.plateauHi = plateauHi;
    c = skinFrame(pixels, w, state.image, phase, model, refreshed, sums);
  } else {
    refresh(pixels, state, L, q0, q1, plateauLo, plateauHi, refreshed);
    c = cropSums(pixels, w, sums);
  }
  const rs = refreshed.rs;
  const rr = refreshed.rr;
  const rg = refreshed.rg;
  const ry = refreshed.ry;
  if (rs > 1e-9) {
    state.refR += REF_ALPHA * (rr / rs - state.refR);
    state.refG += REF_ALPHA * (rg / rs - state.refG);
    state.refLuma = Math.max(8, state.refLuma + REF_ALPHA * (ry / rs - state.refLuma));
  }
  const nb = Math.max(1, L.bgByte.length);
  out.bgR = c.bgR / nb;
  out.bgG = c.bgG / nb;
  out.bgB = c.bgB / nb;
  exposureFromSums(c.faceR, c.faceG, c.faceB, c.faceClipped, exposure);
  out.luma = exposure.luma;
  out.clipped = exposure.clipped;
  const wp = L.priorTotal;
  const ws = c.skinW;
  if (ws > 0) {
    out.r = c.skinR / ws;
    out.g = c.skinG / ws;
    out.b = c.skinB / ws;
    out.skinFraction = Math.min(1, ws / WEIGHT_ONE / wp);
    return out;
  }
  // Nothing looks like skin: fall back to the prior-weighted mean and report it.
  const byte = L.byte;
  let pr = 0;
  let pg = 0;
  let pb = 0;
  for (let k = 0; k < L.n; k++) {
    const j = byte[k];
    pr += prior[k] * pixels[j];
    pg += prior[k] * pixels[j + 1];
    pb += prior[k] * pixels[j + 2];
  }
  out.r = pr / wp;
  out.g = pg / wp;
  out.b = pb / wp;
  out.skinFraction = 0;
  return out;
}
