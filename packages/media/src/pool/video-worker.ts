/**
 * Entry of a video worker thread (video-pool.ts): runs `videoToPackets` for each task, or the aux
 * analyzer (emotion, gaze) over a job's aux JPEGs. The worker
 * keeps its module state between tasks, so the face models it loaded for its first video (its own
 * Human and tfjs instance, human-runtime.ts) serve its later ones.
 */
import { workerData } from 'node:worker_threads';
import { createAuxAnalyzer, type AuxAnalysis, type AuxAnalyzer } from '../aux-analyzer.js';
import { videoToPackets, type VideoResult } from '../video.js';
import { lowerThreadPriority } from './priority.js';
import { serveTasks } from './serve.js';
import type { AuxCapabilities, VideoTask } from './video-pool.js';

lowerThreadPriority((workerData as { nice?: number } | null)?.nice ?? 0);

let analyzer: Promise<AuxAnalyzer> | undefined;

serveTasks<VideoTask, VideoResult | AuxAnalysis[] | AuxCapabilities>(async (task, { signal, progress, emit }) => {
  if (task.kind === 'video')
    return videoToPackets(task.file, {
      ...task.opts,
      signal,
      onProgress: progress,
      onAux: task.emitAux ? (jpeg) => emit(jpeg) : undefined,
    });
  // The aux models (emotion, iris) load once per worker, on its first aux task.
  const a = await (analyzer ??= createAuxAnalyzer());
  if (task.kind === 'aux-capabilities') return { emotion: a.emotionAvailable, gaze: a.gazeAvailable };
  const out: AuxAnalysis[] = [];
  for (const img of task.images) {
    signal.throwIfAborted();
    out.push(await a.analyze(img));
  }
  return out;
});
