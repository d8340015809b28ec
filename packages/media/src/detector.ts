/**
 * The face-detector port of the video pipeline. The real adapter is `human-detector.ts`
 * (@vladmandic/human on tfjs WASM); tests may pass their own.
 */
import type { Box } from '@vitals/protocol';

export interface RgbImage {
  /** Interleaved RGB, `width * height * 3` bytes. */
  data: Uint8Array;
  width: number;
  height: number;
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
   * Faces in one frame of a video, in any order. `fresh` asks for a full detection; otherwise the
   * detector may track the faces of the previous call of the same `track` (cheaper).
   */
  detect(image: RgbImage, opts: { fresh: boolean; track: object }): Promise<DetectedFace[]>;
}
