/**
 * The Human (@vladmandic/human) face detector behind the tracker's port, with no Node or DOM API:
 * the video pipeline hands it a Human instance loaded from disk, the browser capture one loaded
 * from the service's model bundle. BlazeFace finds faces (`fresh` calls); FaceMesh refines them
 * into 468 landmarks and, between fresh calls, tracks them from the previous mesh box (Human's
 * detector cache), which costs about a quarter of a detection.
 *
 * Human keeps that cache in its module state, so one loaded Human module serves one tracker at a
 * time: the runtime that loads it leases it to a single detector (media's human-runtime.ts pool;
 * one per page in the browser).
 */
import type { Box } from '@vitals/protocol';
import type { DetectedFace, FaceDetector, RgbImage } from './detector.js';

/** The slice of Human's face result we use (its own typings pull in DOM types). */
export interface HumanFace {
  score: number;
  boxScore: number;
  faceScore: number;
  box: [number, number, number, number];
  mesh: [number, number, number?][];
  rotation?: { angle: { roll: number; yaw: number; pitch: number } } | null;
  emotion?: { score: number; emotion: string }[];
  annotations: Record<string, [number, number, number?][]>;
}

/** What a detector needs from a loaded Human: detection on an RGB tensor it builds. */
export interface HumanSession {
  readonly version: string;
  /** Backend name, reported in the detector's name (`wasm`, `webgl`, ...). */
  readonly backend: string;
  /** One Human `detect` on the image (RGB, or RGBA with `channels: 4`) with `config`; the session builds and disposes the tensor. */
  detectRgb(image: RgbImage, config: object): Promise<{ face: HumanFace[]; error?: string | null }>;
  /** Ends the lease of the loaded Human. */
  release?(): void;
  /** `detectRgb` makes the RGB it reads of frames with `prepareRegion` (FaceDetector.preparesFrames). */
  readonly preparesFrames?: boolean;
}

/** Everything off except the face models we use; per-call configs switch iris and emotion. */
export const HUMAN_BASE_CONFIG = {
  backend: 'wasm',
  debug: false,
  async: true,
  warmup: 'none',
  cacheModels: false,
  cacheSensitivity: 0,
  filter: { enabled: false },
  face: {
    enabled: true,
    detector: {
      enabled: true,
      rotation: false,
      maxDetected: 5,
      minConfidence: 0.5,
      iouThreshold: 0.1,
      skipFrames: 0,
      skipTime: 0,
      return: false,
    },
    mesh: { enabled: true, keepInvalid: false },
    iris: { enabled: true },
    emotion: { enabled: true, minConfidence: 0, skipFrames: 0, skipTime: 0 },
    description: { enabled: false },
    antispoof: { enabled: false },
    liveness: { enabled: false },
    attention: { enabled: false },
    gear: { enabled: false },
  },
  body: { enabled: false },
  hand: { enabled: false },
  object: { enabled: false },
  gesture: { enabled: false },
  segmentation: { enabled: false },
};

/** The models a tracker loads (the browser's bundle needs exactly these). */
export const TRACKER_MODELS = ['blazeface', 'facemesh'] as const;

const DEG = 180 / Math.PI;

/** The tight box around the mesh points: the face itself, no margin. */
export function meshBox(mesh: readonly (readonly number[])[]): Box {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const p of mesh) {
    if (p[0] < x0) x0 = p[0];
    if (p[0] > x1) x1 = p[0];
    if (p[1] < y0) y0 = p[1];
    if (p[1] > y1) y1 = p[1];
  }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

export function toDetectedFace(f: HumanFace): DetectedFace {
  const mesh = f.mesh.map((p) => [p[0], p[1], p[2] ?? 0]);
  const box: Box = mesh.length >= 100 ? meshBox(mesh) : { x: f.box[0], y: f.box[1], width: f.box[2], height: f.box[3] };
  const a = f.rotation?.angle;
  return {
    box,
    score: f.score,
    mesh: mesh.length >= 100 ? mesh : undefined,
    angles: a ? { yawDeg: a.yaw * DEG, pitchDeg: a.pitch * DEG, rollDeg: a.roll * DEG } : undefined,
  };
}

/** Human's config for one tracking call: a full detection when `fresh`, else mesh tracking from the cache. */
export function trackingConfig(fresh: boolean): object {
  return {
    ...HUMAN_BASE_CONFIG,
    // cacheSensitivity 0 disables Human's cache: a full BlazeFace pass. Otherwise the cache is
    // always allowed (relative frame difference is at most 1 for any real video change short of a
    // scene cut) and never expires by count or wall-clock time: we decide when to re-detect.
    cacheSensitivity: fresh ? 0 : 1,
    face: {
      ...HUMAN_BASE_CONFIG.face,
      detector: { ...HUMAN_BASE_CONFIG.face.detector, skipFrames: fresh ? 0 : 1e9, skipTime: fresh ? 0 : 1e12 },
      iris: { enabled: false },
      emotion: { enabled: false },
    },
  };
}

/** A 1x1 frame no video has: it moves Human's "last input" out of every real frame size. */
const RESET_FRAME: RgbImage = { data: new Uint8Array(3), width: 1, height: 1 };

/**
 * A detector over one leased Human: its tracking state is this detector's alone.
 *
 * Human keeps more than the mesh boxes between calls: the last input frame it compares the next one
 * with (`image.skip`; a fresh call leaves it untouched). A Human that tracked another video before
 * would let this video's first tracking call reuse boxes, where a new one runs a full detection
 * (no last input). One tracking call on a 1x1 frame before the first real call puts any instance
 * in the new one's state, so a measurement never depends on what the instance did before (the
 * equality test in packages/media proves it with two videos at once).
 */
export function createHumanFaceDetector(session: HumanSession): FaceDetector {
  let released = false;
  let reset: Promise<unknown> | null = null;
  return {
    name: `human@${session.version} blazeface+facemesh (tfjs-${session.backend})`,
    preparesFrames: session.preparesFrames === true,
    async detect(image: RgbImage, opts: { fresh: boolean }): Promise<DetectedFace[]> {
      if (released) throw new Error('face detector used after release');
      await (reset ??= session.detectRgb(RESET_FRAME, trackingConfig(false)));
      const result = await session.detectRgb(image, trackingConfig(opts.fresh));
      if (result.error) throw new Error(`face detection failed: ${result.error}`);
      return result.face.map(toDetectedFace);
    },
    release() {
      if (released) return;
      released = true;
      session.release?.();
    },
  };
}
