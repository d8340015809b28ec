/**
 * @vitals/media: a video file in, the spec's packet stream out (Node only).
 * See docs/media.md for the pipeline, the detector and its models, and the rejection rules.
 */
export { FAST_VIDEO, videoToPackets, type VideoOptions, type VideoResult, type VideoStats } from './video.js';
export { resolveFfmpeg, type FfmpegPaths } from './ffmpeg.js';
export { createAuxAnalyzer, EMOTION_CLASSES, type AuxAnalysis, type AuxAnalyzer, type Gaze } from './aux-analyzer.js';
export {
  AUX_GROUP,
  seriesFor,
  seriesOf,
  type AuxAnchor,
  type AuxSeries,
  type AuxStep,
  type AuxWant,
} from './aux-series.js';
export { createHumanDetector } from './human-detector.js';
export type { DetectedFace, FaceDetector, HeadAngles, RgbImage } from './detector.js';
export { encodePacket, packetsToFramesFile } from './frames.js';
export { createVideoPool, defaultVideoThreads, type VideoPool, type VideoPoolOptions } from './pool/video-pool.js';
