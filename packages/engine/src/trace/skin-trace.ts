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
import { backgroundMean } from './crop-means.js';

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
    const wi = w[k];
    if (wi <= 0) continue;
    const m = 3 * L.pixelSlot[k];
    const R = img[m];
    const G = img[m + 1];
    const B = img[m + 2];
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

function refreshAllWeights(s: SkinTraceState, L: Layout): void {
  const img = s.image;
  for (let k = 0; k < L.n; k++) {
    const m = 3 * L.pixelSlot[k];
    s.weights[k] = pixelWeight(img[m], img[m + 1], img[m + 2], L.prior[k], s);
  }
}

function initialize(s: SkinTraceState, pixels: Uint8Array, L: Layout): void {
  for (let q = 0; q < L.n; q++) {
    const j = L.slotByte[q];
    s.image[3 * q] = pixels[j];
    s.image[3 * q + 1] = pixels[j + 1];
    s.image[3 * q + 2] = pixels[j + 2];
  }
  // Start from the prior alone (squared: the centre of the face), then refine the colour model.
  for (let k = 0; k < L.n; k++) s.weights[k] = L.prior[k] * L.prior[k];
  updateReference(s, L, 1);
  for (let it = 0; it < 3; it++) {
    refreshAllWeights(s, L);
    updateReference(s, L, 1);
  }
  refreshAllWeights(s, L);
  s.initialized = true;
}

/**
 * Skin-weighted mean RGB of one 36x36x3 crop (uint8, NHWC). Updates `state`; the same sequence of
 * crops always yields the same sequence of samples.
 */
export function skinWeightedRgb(pixels: Uint8Array, state: SkinTraceState): SkinSample {
  return { ...skinWeightedRgbInto(pixels, state, scratch) };
}

const scratch: SkinSample = { r: 0, g: 0, b: 0, skinFraction: 0, bgR: 0, bgG: 0, bgB: 0 };

/** skinWeightedRgb writing into `out` (no allocation per frame); returns `out`. */
export function skinWeightedRgbInto(pixels: Uint8Array, state: SkinTraceState, out: SkinSample): SkinSample {
  const L = layout();
  if (!state.initialized) initialize(state, pixels, L);
  const img = state.image;
  const w = state.weights;
  // Refresh one interleaved subset of pixels: image, then weight; the same pass accumulates the
  // subset's weighted chromaticity and luma for the slowly adapting skin reference.
  const phase = state.frame % PHASES;
  state.frame++;
  const refR = state.refR;
  const refG = state.refG;
  const refLuma = state.refLuma;
  const slotByte = L.slotByte;
  const slotPixel = L.slotPixel;
  const slotPrior = L.slotPrior;
  // Sums for which lumaGate(sum / 3, refLuma) is certainly 1 (0.6 ≤ q ≤ 1.5 with a 1e-9 relative
  // margin, far wider than the rounding of q = (sum / 3) / refLuma): there prior·kc·1 = prior·kc
  // exactly, so the gate's two divisions are skipped without changing a bit.
  const plateauLo = 3 * refLuma * 0.6 * (1 + 1e-9);
  const plateauHi = 3 * refLuma * 1.5 * (1 - 1e-9);
  const prior = L.prior;
  let rs = 0;
  let rr = 0;
  let rg = 0;
  let ry = 0;
  for (let q = L.groupStart[phase], end = L.groupStart[phase + 1]; q < end; q++) {
    const j = slotByte[q];
    const m = 3 * q;
    // As `img[m] += …` but keeping the unrounded sum, which is what that expression yields.
    const R = img[m] + IMAGE_ALPHA * (pixels[j] - img[m]);
    img[m] = R;
    const G = img[m + 1] + IMAGE_ALPHA * (pixels[j + 1] - img[m + 1]);
    img[m + 1] = G;
    const B = img[m + 2] + IMAGE_ALPHA * (pixels[j + 2] - img[m + 2]);
    img[m + 2] = B;
    const k = slotPixel[q];
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
    w[k] = wi;
  }
  if (rs > 1e-9) {
    state.refR += REF_ALPHA * (rr / rs - state.refR);
    state.refG += REF_ALPHA * (rg / rs - state.refG);
    state.refLuma = Math.max(8, state.refLuma + REF_ALPHA * (ry / rs - state.refLuma));
  }
  const byte = L.byte;
  let ws = 0;
  let sr = 0;
  let sg = 0;
  let sb = 0;
  // Runs of adjacent covered pixels: the byte offset steps by 3 instead of being looked up.
  const runStart = L.runStart;
  for (let r = 0, runs = runStart.length - 1; r < runs; r++) {
    const end = runStart[r + 1];
    // Two pixels per iteration, in order (the same additions in the same order). No test for a zero
    // weight: weights are never negative or NaN and every sum starts at +0, so a zero weight adds
    // +0 and leaves each sum's bits unchanged, and the loop has no data-dependent branch to mispredict.
    let k = runStart[r];
    let j = byte[k];
    for (; k + 1 < end; k += 2, j += 6) {
      const w0 = w[k];
      const w1 = w[k + 1];
      ws += w0;
      sr += w0 * pixels[j];
      sg += w0 * pixels[j + 1];
      sb += w0 * pixels[j + 2];
      ws += w1;
      sr += w1 * pixels[j + 3];
      sg += w1 * pixels[j + 4];
      sb += w1 * pixels[j + 5];
    }
    if (k < end) {
      const wi = w[k];
      ws += wi;
      sr += wi * pixels[j];
      sg += wi * pixels[j + 1];
      sb += wi * pixels[j + 2];
    }
  }
  backgroundMean(pixels, L.bgByte, out);
  const wp = L.priorTotal;
  if (ws > 1e-6) {
    out.r = sr / ws;
    out.g = sg / ws;
    out.b = sb / ws;
    out.skinFraction = Math.min(1, ws / wp);
    return out;
  }
  // Nothing looks like skin: fall back to the prior-weighted mean and report it.
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
