/**
 * One batch job from its stored object to a Settlement (the outcome settleJob records). Frames
 * files are decoded and checked (batch/frames.ts); videos go through the media package, whose
 * rejection code becomes the job's `error.code` (CLARIFICATIONS 22). Both end in the engine's
 * offline estimator: one estimator, three doors (ARCHITECTURE).
 */
import type { EngineMeasurement } from '@vitals/engine';
import type { VideoStats } from '@vitals/media';
import type { Settlement } from '../domain/jobs.js';
import { measurementFields, newAuxAggregate } from '../domain/measurement-fields.js';
import type { JobRow } from '../store/jobs.js';
import type { BatchRuntime } from './batch-runtime.js';
import { analyzeAux, reassembleAux, sumAux } from './aux.js';
import { AuxPipeline } from './aux-pipeline.js';

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
  const wantsAux = wantAux.emotion || wantAux.gaze;
  let m: EngineMeasurement;
  let auxImages: () => Uint8Array[];
  let mediaStats: VideoStats | undefined;
  // A video's aux images are analysed while its face is still followed, when there are threads.
  let pipeline: AuxPipeline | null = null;
  // Decoding, face analysis and the estimator of a long capture run off the main thread
  // (media-threads.ts), so the API and live sessions of this process never wait behind a job.
  if (job.mode === 'batch_frames') {
    hooks.progress('reading', 0);
    const bytes = await rt.objects.readBytes(job.object_key);
    if (!bytes) return expiredSettlement();
    hooks.progress('estimating', 0.5);
    const out = await rt.threads.frames(bytes, wantsAux, hooks.signal);
    if (!out.check.ok) return { status: 'failed', code: 'invalid_frames_file', message: out.check.message };
    hooks.signal.throwIfAborted();
    m = out.measurement!;
    auxImages = () => out.auxImages;
  } else {
    const local = await rt.objects.localPath(job.object_key);
    if (!local) return expiredSettlement();
    if (wantsAux && rt.threads.threads > 0) pipeline = new AuxPipeline(rt.threads, hooks.signal, { want: wantAux });
    try {
      hooks.progress('decoding', 0);
      const res = await rt.threads.video(
        local.path,
        { aux: wantsAux, onProgress: (f, stage) => hooks.progress(stage ?? 'decoding', f), onAux: pipeline?.add },
        hooks.signal,
      );
      if (!res.ok) {
        pipeline?.cancel();
        return {
          status: 'failed',
          code: res.code,
          message: res.message,
          stats: res.stats ? { media: res.stats } : undefined,
        };
      }
      mediaStats = res.stats;
      hooks.signal.throwIfAborted();
      // Estimated where the face was followed (media-threads.ts `video`): the crops are not here.
      m = res.measurement;
      auxImages = () => reassembleAux(res.packets);
    } catch (err) {
      pipeline?.cancel();
      throw err;
    } finally {
      await local.release();
    }
  }
  hooks.signal.throwIfAborted();
  let aux = newAuxAggregate();
  if (wantsAux) {
    hooks.progress('aux', 0.95);
    const images = auxImages();
    const analyses = pipeline
      ? await pipeline.finish(images)
      : await rt.threads.auxAnalyses(images, hooks.signal, wantAux);
    aux = analyses
      ? sumAux(analyses, wantAux)
      : await analyzeAux(images, await rt.auxAnalyzer(), wantAux, hooks.signal);
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
