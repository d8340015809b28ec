/**
 * One batch job from its stored object to a Settlement (the outcome settleJob records). Frames
 * files are decoded and checked (batch/frames.ts); videos go through the media package, whose
 * rejection code becomes the job's `error.code` (CLARIFICATIONS 22). Both end in the engine's
 * offline estimator: one estimator, three doors (ARCHITECTURE).
 */
import { estimateOffline } from '@vitals/engine';
import type { VideoStats } from '@vitals/media';
import type { Packet } from '@vitals/protocol';
import type { Settlement } from '../domain/jobs.js';
import { measurementFields, newAuxAggregate, videoCaptureSource } from '../domain/measurement-fields.js';
import type { JobRow } from '../store/jobs.js';
import type { BatchRuntime } from './batch-runtime.js';
import { checkFramesFile } from './frames.js';
import { analyzeAux, reassembleAux } from './aux.js';

export interface ProcessHooks {
  signal: AbortSignal;
  /** Coarse progress, 0..1, with the stage name (stored in the job's `stats` while running). */
  progress(stage: string, fraction: number): void;
}

export const expiredSettlement = (): Settlement => ({
  status: 'expired',
  code: 'object_expired',
  message: 'the uploaded object was swept (1 hour from presign) before the job ran',
});

export async function processJob(rt: BatchRuntime, job: JobRow, hooks: ProcessHooks): Promise<Settlement> {
  if (!job.object_key) return { status: 'failed', code: 'internal_error', message: 'job has no object' };
  const accepted = JSON.parse(job.accepted_features ?? job.features) as string[];
  const wantAux = { emotion: accepted.includes('emotion'), gaze: accepted.includes('gaze') };
  let packets: Packet[];
  let mediaStats: VideoStats | undefined;
  if (job.mode === 'batch_frames') {
    hooks.progress('reading', 0);
    const bytes = await rt.objects.readBytes(job.object_key);
    if (!bytes) return expiredSettlement();
    const checked = checkFramesFile(bytes);
    if (!checked.ok) return { status: 'failed', code: 'invalid_frames_file', message: checked.message };
    packets = checked.packets;
  } else {
    const local = await rt.objects.localPath(job.object_key);
    if (!local) return expiredSettlement();
    try {
      hooks.progress('decoding', 0);
      // Loaded on first use: the media stack (ffmpeg wrappers, face models) is heavy to import.
      const { videoToPackets } = await import('@vitals/media');
      const res = await videoToPackets(local.path, {
        aux: wantAux.emotion || wantAux.gaze,
        signal: hooks.signal,
        onProgress: (f) => hooks.progress('decoding', f),
      });
      if (!res.ok)
        return {
          status: 'failed',
          code: res.code,
          message: res.message,
          stats: res.stats ? { media: res.stats } : undefined,
        };
      packets = res.packets;
      mediaStats = res.stats;
    } finally {
      await local.release();
    }
  }
  hooks.signal.throwIfAborted();
  hooks.progress('estimating', 0.9);
  const m = estimateOffline(packets, { source: mediaStats && videoCaptureSource(mediaStats) });
  let aux = newAuxAggregate();
  if (wantAux.emotion || wantAux.gaze) {
    hooks.progress('aux', 0.95);
    aux = await analyzeAux(reassembleAux(packets), await rt.auxAnalyzer(), wantAux, hooks.signal);
  }
  const fields = measurementFields(m, aux);
  return {
    status: 'completed',
    fields,
    framesProcessed: m.stats.framesUsed,
    secondsProcessed: m.durationSec,
    stats: { engine: m.stats, ...(mediaStats ? { media: mediaStats } : {}) },
  };
}
