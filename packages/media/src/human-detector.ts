/**
 * The video pipeline's face detector: the tracker's Human adapter (`@vitals/tracker`) over a Human
 * instance leased for this detector alone (human-runtime.ts). Release it when the video is done.
 */
import { createHumanFaceDetector, type FaceDetector } from '@vitals/tracker';
import { leaseHuman } from './human-runtime.js';

export { meshBox, toDetectedFace } from '@vitals/tracker';

/** A Human face detector with its own tracking state (loads the models for a new instance, ~0.3 s). */
export async function createHumanDetector(): Promise<FaceDetector> {
  return createHumanFaceDetector(await leaseHuman());
}
