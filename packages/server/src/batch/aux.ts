/**
 * Emotion and gaze for a batch job: type-4 aux chunks are reassembled into JPEGs (chunks of one
 * image share `tMicros`), each image is analysed by the media package's aux analyzer, and the
 * aggregates land in the measurement (spec: Events — "aggregates land in the final measurement").
 * The sums and their stored shape are the streaming tier's (domain/measurement-fields.ts).
 */
import type { Packet } from '@vitals/protocol';
import type { AuxAnalysis, AuxAnalyzer } from '@vitals/media';
import { seriesFor } from '@vitals/media/threads';
import { addAuxSample, newAuxAggregate, type AuxAggregate } from '../domain/measurement-fields.js';

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

/** Every complete image through the aux analyzer, summed (the stored means: domain/measurement-fields.ts). */
export async function analyzeAux(
  images: Uint8Array[],
  analyzer: AuxAnalyzer,
  want: { emotion: boolean; gaze: boolean },
  signal?: AbortSignal,
): Promise<AuxAggregate> {
  const series = seriesFor(analyzer, want);
  const analyses: AuxAnalysis[] = [];
  for (const img of images) {
    signal?.throwIfAborted();
    analyses.push(await series.analyze(img));
  }
  return sumAux(analyses, want);
}

/** The images' analyses (in order) summed into the stored aggregate. */
export function sumAux(analyses: readonly AuxAnalysis[], want: { emotion: boolean; gaze: boolean }): AuxAggregate {
  const agg = newAuxAggregate();
  for (const a of analyses) addAuxSample(agg, a, want);
  return agg;
}
