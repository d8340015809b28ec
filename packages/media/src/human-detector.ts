/**
 * FaceDetector adapter over Human: BlazeFace finds faces (`fresh` calls), FaceMesh refines them
 * into 468 landmarks and, between fresh calls, tracks them from the previous mesh box (Human's
 * detector cache), which costs about a quarter of a detection.
 */
import type { Box } from '@vitals/protocol';
import type { DetectedFace, FaceDetector, RgbImage } from './detector.js';
import { BASE_CONFIG, loadHuman, type HumanFace, type HumanRuntime } from './human-runtime.js';

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

function videoConfig(fresh: boolean): object {
  return {
    ...BASE_CONFIG,
    // cacheSensitivity 0 disables Human's cache: a full BlazeFace pass. Otherwise the cache is
    // always allowed (relative frame difference is at most 1 for any real video change short of a
    // scene cut) and never expires by count or wall-clock time: we decide when to re-detect.
    cacheSensitivity: fresh ? 0 : 1,
    face: {
      ...BASE_CONFIG.face,
      detector: { ...BASE_CONFIG.face.detector, skipFrames: fresh ? 0 : 1e9, skipTime: fresh ? 0 : 1e12 },
      iris: { enabled: false },
      emotion: { enabled: false },
    },
  };
}

let lastTrack: object | null = null;

/** The process-wide Human face detector (loads the models on first use). */
export async function createHumanDetector(): Promise<FaceDetector> {
  const rt: HumanRuntime = await loadHuman();
  return {
    name: `human@${rt.version} blazeface+facemesh (tfjs-wasm)`,
    detect(image: RgbImage, opts: { fresh: boolean; track: object }): Promise<DetectedFace[]> {
      return rt.runExclusive(async () => {
        // Another caller used the shared cache since our last call: its boxes are not ours.
        const fresh = opts.fresh || lastTrack !== opts.track;
        lastTrack = opts.track;
        const input = rt.tensorFromRgb(image.data, image.width, image.height);
        try {
          const result = await rt.human.detect(input, videoConfig(fresh));
          if (result.error) throw new Error(`face detection failed: ${result.error}`);
          return result.face.map(toDetectedFace);
        } finally {
          input.dispose();
        }
      });
    },
  };
}

/** Marks the shared detector cache as no longer belonging to any video track. */
export function invalidateTrackCache(): void {
  lastTrack = null;
}
