/**
 * The face-detector port of the video pipeline, now the tracker's (`@vitals/tracker`): re-exported
 * so media's public types stay where they were.
 */
export type { DetectedFace, FaceDetector, HeadAngles, RgbImage } from '@vitals/tracker';
