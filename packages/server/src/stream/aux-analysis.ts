/**
 * Emotion and gaze on a session's aux chunks (docs/streaming.md): reassembly (aux-assembler.ts),
 * live `emotion`/`gaze` events and the sums the final measurement averages. At most one analysis
 * in flight per session (the models run at up to 2 Hz anyway); a failed analysis degrades
 * emotion/gaze only. Owned by the session, which says whether it is still live and sends.
 */
import type { AuxChunkPacket } from '@vitals/protocol';
import type { AuxAnalyzer } from '@vitals/media';
import { seriesFor } from '@vitals/media/threads';
import { AuxAssembler } from './aux-assembler.js';
import { newAuxAggregate, type AuxAggregate } from '../domain/measurement-fields.js';

export interface AuxOut {
  /** Whether results still matter (the session is running or finishing). */
  live(): boolean;
  sendLive(event: object): void;
}

export class AuxChannel {
  private readonly assembler = new AuxAssembler();
  private busy = false;
  readonly aggregate: AuxAggregate = newAuxAggregate();
  /**
   * The session's aux images as one series (a full detection every AUX_GROUP analysed images, the
   * others from its face box; docs/media.md, "Aux analyses"); one analysis at a time keeps it in order.
   */
  private readonly series: Pick<AuxAnalyzer, 'analyze'>;

  constructor(
    analyzer: AuxAnalyzer,
    private readonly accepted: readonly string[],
    private readonly out: AuxOut,
  ) {
    const want = { emotion: accepted.includes('emotion'), gaze: accepted.includes('gaze') };
    this.series = seriesFor(analyzer, want);
  }

  /** Incomplete sets dropped (the job's `stats.stream.auxDropped`). */
  get dropped(): number {
    return this.assembler.dropped;
  }

  sweep(now: number): void {
    this.assembler.sweep(now);
  }

  /** Adds one chunk; returns a protocol error when the chunk contradicts its set. */
  add(p: AuxChunkPacket, now: number): string | undefined {
    const r = this.assembler.add(p, now);
    if (r && 'error' in r) return r.error;
    if (r) this.analyze(r.jpeg, r.tMicros);
    return undefined;
  }

  private analyze(jpeg: Uint8Array, tMicros: number): void {
    if (this.busy) return;
    this.busy = true;
    const agg = this.aggregate;
    this.series
      .analyze(jpeg)
      .then((r) => {
        if (!this.out.live()) return;
        const tMs = Math.round(tMicros / 1000);
        if (r.emotion && this.accepted.includes('emotion')) {
          agg.emotionSamples++;
          r.emotion.forEach((v, i) => (agg.emotionSum[i] += v));
          this.out.sendLive({ t: 'emotion', probs: r.emotion, tMs });
        }
        if (r.gaze && this.accepted.includes('gaze')) {
          agg.gazeSamples++;
          agg.yawSum += r.gaze.yaw;
          agg.pitchSum += r.gaze.pitch;
          this.out.sendLive({ t: 'gaze', yaw: r.gaze.yaw, pitch: r.gaze.pitch, tMs });
        }
      })
      .catch(() => undefined) // a failed aux frame degrades emotion/gaze only
      .finally(() => (this.busy = false));
  }
}
