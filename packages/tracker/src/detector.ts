/**
 * The face-detector port of the tracker. The real adapter is `human-face.ts` over a Human instance
 * (@vladmandic/human on tfjs WASM, in Node or in the page); tests may pass their own.
 *
 * One detector instance belongs to one tracker: a detector that tracks between calls keeps that
 * state per instance, so a measurement never depends on what else runs (issue 15 §2, issue 17).
 */
import type { Box } from '@vitals/protocol';

export interface RgbImage {
  /** Interleaved RGB (`width * height * 3` bytes), or RGBA with `channels: 4` (alpha ignored). */
  data: Uint8Array;
  width: number;
  height: number;
  /** 3 (RGB, the default) or 4 (RGBA as a canvas gives it: no per-frame conversion needed). */
  channels?: 3 | 4;
}

export interface HeadAngles {
  yawDeg: number;
  pitchDeg: number;
  rollDeg: number;
}

export interface DetectedFace {
  /** Tight face box in image pixels (no margin): cheek to cheek, forehead to chin. */
  box: Box;
  score: number;
  /** 468 (or 478 with iris) mesh points [x, y, z] in image pixels, when the detector has a mesh. */
  mesh?: number[][];
  angles?: HeadAngles;
}

export interface FaceDetector {
  /** Human-readable name and version, reported in `VideoStats.detector`. */
  readonly name: string;
  /**
   * The detector makes the RGB it reads of frames whose RGB is made on demand (`prepareRegion`):
   * the video pipeline's makes only what its model reads. Otherwise (the default) the tracker
   * prepares the whole frame before each detection.
   */
  readonly preparesFrames?: boolean;
  /**
   * Faces in one frame, in any order. `fresh` asks for a full detection; otherwise the detector may
   * track the faces of its own previous call (cheaper).
   */
  detect(image: RgbImage, opts: { fresh: boolean }): Promise<DetectedFace[]>;
  /** Gives back what the detector holds (a leased model instance); the detector is unusable after. */
  release?(): void;
}

/** One frame for the tracker: interleaved RGB with its index and presentation time. */
export interface TrackerFrame extends RgbImage {
  /** Index among the source's frames, from 0 (becomes the type-1 `seq`). */
  index: number;
  /** Presentation time in seconds (any origin; packets count from the first frame). */
  tSec: number;
  /**
   * For frames whose RGB is made on demand (the video pipeline's YUV frames): makes `data` valid
   * where a crop of `box` reads it (the whole frame for null). Called before each crop.
   */
  prepareRegion?(box: Box | null): void;
  /**
   * For such frames: the face crop of `box` made without RGB (cropResizeRgb's pixels, bit for bit),
   * or null where it cannot be (the tracker then calls `prepareRegion` and crops `data`).
   */
  cropRgb?(box: Box): Uint8Array | null;
}
