/**
 * How every view (CLI summary, console) words a measurement's emotion and gaze: the means of the
 * analysed aux images (docs/decisions.md). Both are read from the face's images, not from the
 * pulse, so they are shown whatever the quality verdict.
 */

/** A stored measurement's `emotion` (the spec's aggregate of the live `emotion` events). */
export interface EmotionAggregate {
  probs?: number[];
  dominant?: string;
  samples?: number;
}

/** A stored measurement's `gaze` (radians; right and up positive). */
export interface GazeAggregate {
  meanYaw?: number;
  meanPitch?: number;
  samples?: number;
}

/** `, 104 images` when the count was stored; nothing when it was not. */
const images = (n: unknown, pre: string): string =>
  typeof n === 'number' && Number.isFinite(n) ? `${pre}${n === 1 ? '1 image' : `${n} images`}` : '';
const DEG = 180 / Math.PI;

/** `Neutral (67 %, 104 images)`: the dominant class of the mean probabilities; undefined when not stored. */
export function emotionWords(e: unknown): string | undefined {
  const v = e as EmotionAggregate | null | undefined;
  if (!v || typeof v.dominant !== 'string' || !v.dominant) return undefined;
  const probs = Array.isArray(v.probs) ? v.probs.filter((p) => typeof p === 'number' && Number.isFinite(p)) : [];
  const share = probs.length ? Math.max(...probs) : undefined;
  return `${v.dominant}${share !== undefined ? ` (${(100 * share).toFixed(0)} %${images(v.samples, ', ')})` : ''}`;
}

/** `yaw -0.4°, pitch 1.3° (mean of 104 images)`: right and up positive; undefined when not stored. */
export function gazeWords(g: unknown): string | undefined {
  const v = g as GazeAggregate | null | undefined;
  if (!v || typeof v.meanYaw !== 'number' || typeof v.meanPitch !== 'number') return undefined;
  if (!Number.isFinite(v.meanYaw) || !Number.isFinite(v.meanPitch)) return undefined;
  const of = images(v.samples, 'mean of ');
  return `yaw ${(v.meanYaw * DEG).toFixed(1)}°, pitch ${(v.meanPitch * DEG).toFixed(1)}°${of ? ` (${of})` : ''}`;
}
