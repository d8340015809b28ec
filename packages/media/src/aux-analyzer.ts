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
import {
  seriesOf,
  type AuxAnalysis,
  type AuxAnchor,
  type AuxSeries,
  type AuxStep,
  type AuxWant,
  type Gaze,
  type MeshInBox,
} from './aux-series.js';
import {
  BASE_CONFIG,
  loadHuman,
  type HumanFace,
  type HumanRuntime,
  type RgbImage,
  type SeedBox,
} from './human-runtime.js';

export type { AuxAnalysis, Gaze } from './aux-series.js';

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

export interface AuxAnalyzer {
  readonly emotionAvailable: boolean;
  readonly gazeAvailable: boolean;
  /**
   * Analyses one reassembled 448x448 aux JPEG (a full detection). Calls are serialized
   * process-wide. `want`: what was ordered (default both); a model nobody ordered does not run (the
   * Iris model is ~45 % of an analysis from a box, the emotion model ~25 %).
   */
  analyze(jpegBytes: Uint8Array, want?: AuxWant): Promise<AuxAnalysis>;
  /**
   * A capture's aux images analysed in order, cheaper than one by one (AuxSeries); absent where an
   * analyzer has no such mode (then `analyze` each).
   */
  series?(want?: AuxWant): AuxSeries;
  /**
   * One image of a series kept by the caller (`seriesOf`): `from` is its group's first image's
   * anchor, null for a group's first image (a full detection).
   */
  step?(jpegBytes: Uint8Array, from: AuxAnchor | null, want?: AuxWant): Promise<AuxStep>;
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

/** Human's config for what was ordered: the Iris model only for gaze, the emotion model only for emotion. */
function auxConfig(want: AuxWant): object {
  if (want.emotion && want.gaze) return AUX_CONFIG;
  return {
    ...AUX_CONFIG,
    face: {
      ...AUX_CONFIG.face,
      iris: { ...AUX_CONFIG.face.iris, enabled: want.gaze },
      emotion: { ...AUX_CONFIG.face.emotion, enabled: want.emotion },
    },
  };
}

const BOTH: AuxWant = { emotion: true, gaze: true };

function decodeAux(jpegBytes: Uint8Array): RgbImage | null {
  try {
    return jpeg.decode(jpegBytes, {
      useTArray: true,
      formatAsRGBA: false,
      maxResolutionInMP: 4,
      maxMemoryUsageInMB: 64,
    });
  } catch {
    return null;
  }
}

/**
 * How far a mesh may sit from its group's first one, in box sides, for an analysis from that
 * first image's box to stand: the centre within 0.04 and the size within 6 %. On 765 aux images
 * of six UBFC-rPPG videos (faces followed by our tracker) the centre moved at most 0.026 and the
 * size 2.2 % (5.5 % once); a face shifted by 20 px in a 448 px image moves it 0.06, one scaled by
 * 0.8 or 1.2 the size by 16 % and 9 % (docs/media.md, "Aux analyses").
 */
const FACE_MOVED = { centre: 0.04, size: 0.06 };

function meshInBox(face: HumanFace, box: SeedBox): MeshInBox | null {
  const m = face.mesh;
  if (!m || m.length < 468) return null;
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (let i = 0; i < 468; i++) {
    const [x, y] = m[i];
    x0 = Math.min(x0, x);
    x1 = Math.max(x1, x);
    y0 = Math.min(y0, y);
    y1 = Math.max(y1, y);
  }
  const side = box.endPoint[0] - box.startPoint[0];
  if (!(side > 0)) return null;
  return {
    dx: ((x0 + x1) / 2 - (box.startPoint[0] + box.endPoint[0]) / 2) / side,
    dy: ((y0 + y1) / 2 - (box.startPoint[1] + box.endPoint[1]) / 2) / side,
    size: Math.max(x1 - x0, y1 - y0) / side,
  };
}

function faceMoved(a: MeshInBox, b: MeshInBox): boolean {
  return Math.hypot(a.dx - b.dx, a.dy - b.dy) > FACE_MOVED.centre || Math.abs(a.size / b.size - 1) > FACE_MOVED.size;
}

/**
 * Loads the emotion and gaze models (shared Human instance; ~0.3 s the first time in a process).
 * Never throws for missing models: the `available` flags say what this node can do.
 */
export async function createAuxAnalyzer(): Promise<AuxAnalyzer> {
  let rt: HumanRuntime;
  try {
    rt = await loadHuman();
  } catch {
    return { emotionAvailable: false, gazeAvailable: false, analyze: async () => ({}) };
  }
  const runtime = rt;
  const emotionAvailable = runtime.loaded.includes('emotion');
  const gazeAvailable = runtime.loaded.includes('iris');
  const fromFace = (face: HumanFace | undefined, want: AuxWant): AuxAnalysis => {
    if (!face) return {};
    const mesh = toDetectedFace(face).mesh;
    const out: AuxAnalysis = {};
    if (want.emotion && emotionAvailable && face.emotion) out.emotion = toEightClasses(face.emotion, mesh);
    const angle = face.rotation?.angle;
    if (want.gaze && gazeAvailable && mesh && angle) out.gaze = gazeFromMesh(mesh, angle.yaw, angle.pitch);
    return out;
  };
  /**
   * One image. With `from` (its group's first image: the box BlazeFace gave FaceMesh there, and
   * where the mesh sat in that box), FaceMesh starts from that box, and the result stands when
   * the mesh sits where the first image's did (FACE_MOVED); otherwise, and without `from`, a full
   * detection. `anchor`: what a full detection leaves for its group's next images.
   */
  const step = (jpegBytes: Uint8Array, from: AuxAnchor | null, want: AuxWant = BOTH): Promise<AuxStep> => {
    if (!want.emotion && !want.gaze) return Promise.resolve({ analysis: {}, anchor: null });
    const config = auxConfig(want);
    const image = decodeAux(jpegBytes);
    if (!image) return Promise.resolve({ analysis: {}, anchor: null });
    // Full detections and detections from a box on the shared instance: no tracker leases it, and
    // nothing of one call is kept for the next.
    return runtime.runExclusive(async () => {
      if (from && runtime.detectFromBox) {
        const face = (await runtime.detectFromBox(image, from.box, config)).face[0];
        const at = face && meshInBox(face, from.box);
        if (at && !faceMoved(at, from.mesh)) return { analysis: fromFace(face, want), anchor: null };
      }
      const face = (await runtime.detectRgb(image, config)).face[0];
      const box = runtime.detectorBoxes?.()[0];
      const mesh = face && box ? meshInBox(face, box) : null;
      return { analysis: fromFace(face, want), anchor: box && mesh ? { box, mesh } : null };
    });
  };
  return {
    emotionAvailable,
    gazeAvailable,
    async analyze(jpegBytes, want) {
      return (await step(jpegBytes, null, want)).analysis;
    },
    step,
    series: (want) => seriesOf((jpegBytes, from) => step(jpegBytes, from, want)),
  };
}
