/**
 * @vitals/tracker: face tracking for the video pipeline and the browser capture (isomorphic: no
 * Node or DOM API). See docs/media.md ("Pipeline") and docs/capture.md.
 */
export { FaceTracker, STEADY_SHIFT, STEADY_VIDEO, type SteadyRates, type TrackerOptions } from './tracker.js';
export { FrameScheduler, largestFace, type Analysis, type ScheduledFrame } from './schedule.js';
export { Packetizer, type PacketizerOptions } from './packetizer.js';
export { faceTelemetry, eyeOpenness, jawOpenness, type FaceTelemetry } from './landmarks.js';
export { AUX_CONTEXT, auxRgb, auxSquare, type AuxEncoder } from './aux-crop.js';
export type { DetectedFace, FaceDetector, HeadAngles, RgbImage, TrackerFrame } from './detector.js';
export {
  createHumanFaceDetector,
  HUMAN_BASE_CONFIG,
  meshBox,
  toDetectedFace,
  trackingConfig,
  TRACKER_MODELS,
  type HumanFace,
  type HumanSession,
} from './human-face.js';
