/**
 * Emotion and gaze for a batch job: type-4 aux chunks are reassembled into JPEGs (chunks of one
 * image share `tMicros`), each image is analysed by the media package's aux analyzer, and the
 * aggregates land in the measurement (spec: Events — "aggregates land in the final measurement").
 * Shape (not shown in the spec; the same as the streaming tier's, docs/decisions.md):
 * `emotion: {probs, dominant, samples}` (mean of eight probabilities in the spec's order),
 * `gaze: {meanYaw, meanPitch, unit: 'rad', samples}`; `null` when ordered but nothing was analysed.
 */
import type { Packet } from '@vitals/protocol';
import type { AuxAnalyzer } from '@vitals/media';

/** The spec's eight classes, in order (media's EMOTION_CLASSES; repeated to keep media lazy). */
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

export function reassembleAux(packets: readonly Packet[]): Uint8Array[] {
  const sets = new Map<number, { count: number; chunks: Map<number, Uint8Array> }>();
  for (const p of packets) {
    if (p.type !== 4) continue;
    let s = sets.get(p.tMicros);
    if (!s) sets.set(p.tMicros, (s = { count: p.chunkCount, chunks: new Map() }));
    s.chunks.set(p.chunkIndex, p.payload);
  }
  const out: Uint8Array[] = [];
  for (const [, s] of [...sets].sort((a, b) => a[0] - b[0])) {
    if (s.chunks.size !== s.count) continue; // incomplete set: dropped, as on the stream
    const parts = [...s.chunks].sort((a, b) => a[0] - b[0]).map(([, c]) => c);
    const total = parts.reduce((n, c) => n + c.length, 0);
    const jpeg = new Uint8Array(total);
    let at = 0;
    for (const c of parts) {
      jpeg.set(c, at);
      at += c.length;
    }
    out.push(jpeg);
  }
  return out;
}

export interface AuxAggregates {
  emotion?: { probs: number[]; dominant: string; samples: number } | null;
  gaze?: { meanYaw: number; meanPitch: number; unit: 'rad'; samples: number } | null;
}

export async function analyzeAux(
  images: Uint8Array[],
  analyzer: AuxAnalyzer,
  want: { emotion: boolean; gaze: boolean },
  signal?: AbortSignal,
): Promise<AuxAggregates> {
  const sum = new Array<number>(EMOTION_CLASSES.length).fill(0);
  let nEmotion = 0;
  let yaw = 0;
  let pitch = 0;
  let nGaze = 0;
  for (const img of images) {
    signal?.throwIfAborted();
    const a = await analyzer.analyze(img);
    if (want.emotion && a.emotion?.length === EMOTION_CLASSES.length) {
      a.emotion.forEach((p, i) => (sum[i] += p));
      nEmotion++;
    }
    if (want.gaze && a.gaze) {
      yaw += a.gaze.yaw;
      pitch += a.gaze.pitch;
      nGaze++;
    }
  }
  const out: AuxAggregates = {};
  const r = (v: number): number => Math.round(v * 1e4) / 1e4;
  if (want.emotion) {
    const probs = sum.map((s) => r(s / Math.max(1, nEmotion)));
    out.emotion =
      nEmotion > 0 ? { probs, dominant: EMOTION_CLASSES[probs.indexOf(Math.max(...probs))], samples: nEmotion } : null;
  }
  if (want.gaze)
    out.gaze = nGaze > 0 ? { meanYaw: r(yaw / nGaze), meanPitch: r(pitch / nGaze), unit: 'rad', samples: nGaze } : null;
  return out;
}
