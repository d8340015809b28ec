/**
 * An aux series (the analyzer is aux-analyzer.ts): what it is, its group size, its bookkeeping and
 * what an analysis answers.
 * A module of its own, light to import, so that the pools' callers can split a capture's images at
 * group boundaries and keep a series for analyses run on another thread without loading the models.
 */
import type { SeedBox } from './human-runtime.js';

export interface Gaze {
  /** Radians, positive towards the image's right. */
  yaw: number;
  /** Radians, positive upwards. */
  pitch: number;
}

export interface AuxAnalysis {
  /** Eight probabilities in EMOTION_CLASSES order; absent when no face or no emotion model. */
  emotion?: number[];
  gaze?: Gaze;
}

/**
 * Aux images per group of an aux series (AuxSeries): the first of each group is a full detection,
 * the others start FaceMesh from its detector box. 4 s of a capture at the spec's 2 Hz. Measured
 * on the 2,075 aux images of the 16 UBFC-rPPG videos against a full detection of each
 * (scripts/eval/aux-series.ts; docs/media.md, "Aux analyses"): per capture, the mean emotion
 * probabilities and the mean gaze move about as much as when every image is shifted by one pixel.
 */
export const AUX_GROUP = 8;

/** What a capture ordered of the aux models' results (a model nobody ordered does not run). */
export interface AuxWant {
  emotion: boolean;
  gaze: boolean;
}

/**
 * A capture's aux images, in order. The first of every AUX_GROUP images (counted from the series'
 * first) is a full detection; the others start FaceMesh from the face box BlazeFace gave that one
 * (about half the CPU of a full detection: no BlazeFace), and get a full detection when the mesh
 * does not sit in that box as the first one's did (the face moved, or was not found there). An
 * image's analysis depends only on itself and its group's first image, so a capture split into
 * parts at multiples of AUX_GROUP gets the same analyses.
 */
export interface AuxSeries {
  analyze(jpegBytes: Uint8Array): Promise<AuxAnalysis>;
}

/**
 * The series `analyzer` runs for `want` (what was ordered), or, for an analyzer without one (the
 * one whose models did not load, test doubles), its `analyze` of each image: what every caller
 * (a job's images on a worker or the main thread, a live session) iterates.
 */
export function seriesFor(
  analyzer: {
    analyze(jpegBytes: Uint8Array, want?: AuxWant): Promise<AuxAnalysis>;
    series?(want?: AuxWant): AuxSeries;
  },
  want?: AuxWant,
): AuxSeries {
  return analyzer.series?.(want) ?? { analyze: (jpegBytes) => analyzer.analyze(jpegBytes, want) };
}

/** Where a face mesh sits in a detector box: its centre and larger side, in box sides. */
export interface MeshInBox {
  dx: number;
  dy: number;
  size: number;
}

/**
 * What a group's first image leaves its group (plain data, so a series can be kept on another
 * thread than its analyses): the box BlazeFace gave FaceMesh, and where the mesh sat in it.
 */
export interface AuxAnchor {
  box: SeedBox;
  mesh: MeshInBox;
}

/** One image of a series: its analysis, and the anchor it leaves when it was its group's first. */
export interface AuxStep {
  analysis: AuxAnalysis;
  anchor: AuxAnchor | null;
}

/**
 * A series over `step` (AuxSeries): each group's first image without an anchor, the others with
 * that one's. Analyses must be awaited one at a time, in order.
 */
export function seriesOf(step: (jpegBytes: Uint8Array, from: AuxAnchor | null) => Promise<AuxStep>): AuxSeries {
  let index = 0;
  // This group's first image's anchor; null when it had no face.
  let anchor: AuxAnchor | null = null;
  return {
    async analyze(jpegBytes) {
      const first = index++ % AUX_GROUP === 0;
      if (first) anchor = null;
      const r = await step(jpegBytes, first ? null : anchor);
      if (first) anchor = r.anchor;
      return r.analysis;
    },
  };
}
