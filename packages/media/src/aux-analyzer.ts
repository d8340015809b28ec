/**
 * Emotion and gaze from type-4 aux JPEGs, for the server. Models: Human's `emotion` (7 classes,
 * Oarriaga's mini-Xception trained on FER-2013) and FaceMesh + Iris (MediaPipe) landmarks.
 *
 * The spec's 8 classes, in order: Anger=angry, Contempt=derived (below), Disgust=disgust,
 * Fear=fear, Happiness=happy, Neutral=neutral, Sadness=sad, Surprise=surprise. The model has no
 * contempt class; contempt is read from its one facial sign, a one-sided lip-corner raise (AU14
 * unilateral), and takes its share from the other seven, so the eight still sum to 1.
 */
import jpeg from 'jpeg-js';
import { toDetectedFace } from '@vitals/tracker';
import { BASE_CONFIG, loadHuman, type HumanFace } from './human-runtime.js';

export const EMOTION_CLASSES = [
  'Anger',
  'Contempt',
  'Disgust',
  'Fear',
  'Happiness',
  'Neutral',
  'Sadness',
  'Surprise',
] as const;
const FROM_MODEL: Record<string, number> = {
  angry: 0,
  disgust: 2,
  fear: 3,
  happy: 4,
  neutral: 5,
  sad: 6,
  surprise: 7,
};

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

export interface AuxAnalyzer {
  readonly emotionAvailable: boolean;
  readonly gazeAvailable: boolean;
  /** Analyses one reassembled 448x448 aux JPEG. Calls are serialized process-wide. */
  analyze(jpegBytes: Uint8Array): Promise<AuxAnalysis>;
}

type Pt = readonly number[];
const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);

/** Mouth-corner asymmetry after removing head roll, as a share of mouth width. */
export function lipCornerAsymmetry(m: readonly Pt[]): number {
  const ex = m[263][0] - m[33][0];
  const ey = m[263][1] - m[33][1];
  const len = Math.hypot(ex, ey) || 1;
  // Unit normal of the eye line: "up" in the face's own frame, whatever the roll.
  const nx = ey / len;
  const ny = -ex / len;
  const cx = (m[13][0] + m[14][0]) / 2;
  const cy = (m[13][1] + m[14][1]) / 2;
  const lift = (p: Pt): number => (p[0] - cx) * nx + (p[1] - cy) * ny;
  const width = Math.hypot(m[291][0] - m[61][0], m[291][1] - m[61][1]) || 1;
  return Math.abs(lift(m[61]) - lift(m[291])) / width;
}

/** Seven model scores → the spec's eight probabilities (see the module comment). */
export function toEightClasses(scores: { score: number; emotion: string }[], mesh?: readonly Pt[]): number[] {
  const out = new Array<number>(8).fill(0);
  for (const s of scores) if (s.emotion in FROM_MODEL) out[FROM_MODEL[s.emotion]] += Math.max(0, s.score);
  const total = out.reduce((a, b) => a + b, 0);
  if (total <= 0) out[5] = 1;
  else for (let i = 0; i < 8; i++) out[i] /= total;
  const contempt = mesh && mesh.length >= 468 ? 0.5 * clamp((lipCornerAsymmetry(mesh) - 0.05) / 0.15, 0, 1) : 0;
  for (let i = 0; i < 8; i++) out[i] *= 1 - contempt;
  out[1] = contempt;
  return out;
}

/**
 * Gaze = head rotation + eye-in-head rotation, yaw positive towards the image's right and pitch
 * positive upwards. The eye part treats each eyeball as a sphere whose
 * radius is 0.55 eye widths and reads the iris centre's offset from the eye centre (MediaPipe Iris
 * points 468-477, present when the iris model ran).
 */
export function gazeFromMesh(m: readonly Pt[], headYawRad: number, headPitchRad: number): Gaze | undefined {
  if (m.length < 478) return undefined;
  const eyes = [
    { outer: m[33], inner: m[133], upper: m[159], lower: m[145] },
    { outer: m[263], inner: m[362], upper: m[386], lower: m[374] },
  ];
  const irises = [m.slice(468, 473), m.slice(473, 478)].map((pts) => [
    pts.reduce((a, p) => a + p[0], 0) / pts.length,
    pts.reduce((a, p) => a + p[1], 0) / pts.length,
  ]);
  let yaw = 0;
  let pitch = 0;
  for (const eye of eyes) {
    const cx = (eye.outer[0] + eye.inner[0]) / 2;
    const cy = (eye.upper[1] + eye.lower[1]) / 2;
    const width = Math.hypot(eye.outer[0] - eye.inner[0], eye.outer[1] - eye.inner[1]) || 1;
    const iris = irises.reduce((a, b) =>
      Math.hypot(a[0] - cx, a[1] - cy) <= Math.hypot(b[0] - cx, b[1] - cy) ? a : b,
    );
    const r = 0.55 * width;
    yaw += Math.asin(clamp((iris[0] - cx) / r, -1, 1)) / 2;
    pitch += Math.asin(clamp(-(iris[1] - cy) / r, -1, 1)) / 2;
  }
  // Human's head yaw is positive towards the image's left and its pitch positive chin-down
  // (checked on mirrored frames and mesh depth); the gaze convention is image-right and up.
  return { yaw: yaw - headYawRad, pitch: pitch - headPitchRad };
}

const AUX_CONFIG = {
  ...BASE_CONFIG,
  cacheSensitivity: 0,
  face: { ...BASE_CONFIG.face, detector: { ...BASE_CONFIG.face.detector, maxDetected: 1 } },
};

/**
 * Loads the emotion and gaze models (shared Human instance; ~0.3 s the first time in a process).
 * Never throws for missing models: the `available` flags say what this node can do.
 */
export async function createAuxAnalyzer(): Promise<AuxAnalyzer> {
  let rt;
  try {
    rt = await loadHuman();
  } catch {
    return { emotionAvailable: false, gazeAvailable: false, analyze: async () => ({}) };
  }
  const runtime = rt;
  const emotionAvailable = runtime.loaded.includes('emotion');
  const gazeAvailable = runtime.loaded.includes('iris');
  return {
    emotionAvailable,
    gazeAvailable,
    analyze(jpegBytes: Uint8Array): Promise<AuxAnalysis> {
      let image: { data: Uint8Array; width: number; height: number };
      try {
        image = jpeg.decode(jpegBytes, {
          useTArray: true,
          formatAsRGBA: false,
          maxResolutionInMP: 4,
          maxMemoryUsageInMB: 64,
        });
      } catch {
        return Promise.resolve({});
      }
      return runtime.runExclusive(async () => {
        // Full detections on the shared instance: no tracker leases it, so no tracking state is touched.
        const input = runtime.tensorFrom(image);
        try {
          const result = await runtime.human.detect(input, AUX_CONFIG);
          const face: HumanFace | undefined = result.face[0];
          if (!face) return {};
          const mesh = toDetectedFace(face).mesh;
          const out: AuxAnalysis = {};
          if (emotionAvailable && face.emotion) out.emotion = toEightClasses(face.emotion, mesh);
          const angle = face.rotation?.angle;
          if (gazeAvailable && mesh && angle) out.gaze = gazeFromMesh(mesh, angle.yaw, angle.pitch);
          return out;
        } finally {
          input.dispose();
        }
      });
    },
  };
}
