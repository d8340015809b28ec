// State and sample of the skin-weighted trace (skin-trace.ts): the state is explicit and owned by
// the caller, so the streaming and offline estimators produce bit-identical traces from the same
// packets.
import { CROP_PIXELS } from './face-prior.js';
import { layout, PHASES } from './skin-layout.js';

export interface SkinTraceState {
  /**
   * Smoothed crop (RGB, float) of the pixels the face prior covers (prior > 0), stored by refresh
   * phase, each phase's slots as three planes R, G, B (layout.groupImage): each pixel is refreshed
   * every PHASES frames. Pixels outside the prior never get a weight, so their smoothed values were
   * never read and are not kept.
   */
  image: Float32Array;
  /**
   * Current skin weight (prior × colour model) of every crop pixel, in crop order, as an integer
   * out of WEIGHT_ONE (pixel-sums.ts: integer weights make the weighted sums exact); zero where the
   * prior is zero.
   */
  weights: Uint16Array;
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
  /** Face-region exposure (exposure.ts): mean luma, and the share of its pixels with a clipped channel. */
  luma: number;
  clipped: number;
}

export function createSkinTraceState(): SkinTraceState {
  const L = layout();
  return {
    image: new Float32Array(L.groupImage[PHASES]),
    weights: new Uint16Array(CROP_PIXELS),
    refR: 0.4,
    refG: 0.32,
    refLuma: 120,
    frame: 0,
    initialized: false,
  };
}
