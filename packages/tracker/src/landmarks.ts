/**
 * Telemetry values (spec: Streaming protocol, type 3) from the 468-point MediaPipe face mesh.
 * Indices follow MediaPipe's canonical face mesh; "left" is the subject's left.
 */
import type { DetectedFace } from './detector.js';

type Pt = readonly number[];
const dist = (a: Pt, b: Pt): number => Math.hypot(a[0] - b[0], a[1] - b[1]);
const clamp01 = (v: number): number => (v < 0 ? 0 : v > 1 ? 1 : Number.isFinite(v) ? v : 0);

/** Eye aspect ratio: mean lid gap over eye width (about 0.3 open, under 0.1 closed). */
function eyeAspect(m: readonly Pt[], outer: number, inner: number, lids: [number, number][]): number {
  const width = dist(m[outer], m[inner]);
  if (width <= 0) return 0;
  let gap = 0;
  for (const [u, l] of lids) gap += dist(m[u], m[l]);
  return gap / lids.length / width;
}

/** Eye openness in [0, 1]: eye aspect ratio mapped linearly from 0.1 (closed) to 0.3 (open). */
export function eyeOpenness(mesh: readonly Pt[], side: 'left' | 'right'): number {
  const ear =
    side === 'left'
      ? eyeAspect(mesh, 263, 362, [
          [385, 380],
          [386, 374],
          [387, 373],
        ])
      : eyeAspect(mesh, 33, 133, [
          [160, 144],
          [159, 145],
          [158, 153],
        ]);
  return clamp01((ear - 0.1) / 0.2);
}

/** Jaw openness in [0, 1]: inner-lip gap over face height, 0.15 of the face height counting as fully open. */
export function jawOpenness(mesh: readonly Pt[]): number {
  const faceHeight = dist(mesh[10], mesh[152]);
  if (faceHeight <= 0) return 0;
  return clamp01(dist(mesh[13], mesh[14]) / faceHeight / 0.15);
}

export interface FaceTelemetry {
  leftEyeOpenness: number;
  rightEyeOpenness: number;
  jawOpenness: number;
  yawDeg: number;
  pitchDeg: number;
  rollDeg: number;
}

/** Landmark-derived telemetry, or null when the detector gave no mesh. */
export function faceTelemetry(face: DetectedFace): FaceTelemetry | null {
  const m = face.mesh;
  if (!m || m.length < 468) return null;
  return {
    leftEyeOpenness: eyeOpenness(m, 'left'),
    rightEyeOpenness: eyeOpenness(m, 'right'),
    jawOpenness: jawOpenness(m),
    yawDeg: face.angles?.yawDeg ?? 0,
    pitchDeg: face.angles?.pitchDeg ?? 0,
    rollDeg: face.angles?.rollDeg ?? 0,
  };
}
