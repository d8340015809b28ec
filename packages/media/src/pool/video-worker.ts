/**
 * Entry of a video worker thread (video-pool.ts): runs `videoToPackets` for each task, or the aux
 * analyzer (emotion, gaze) over a job's aux JPEGs. The worker
 * keeps its module state between tasks, so the face models it loaded for its first video (its own
 * Human and tfjs instance, human-runtime.ts) serve its later ones.
 */
import { workerData } from 'node:worker_threads';
import { createAuxAnalyzer, type AuxAnalysis, type AuxAnalyzer } from '../aux-analyzer.js';
import { seriesFor, type AuxStep } from '../aux-series.js';
import { videoToPackets, type VideoResult } from '../video.js';
import { lowerThreadPriority } from './priority.js';
import { serveTasks } from './serve.js';
import type { AuxCapabilities, ConsumedVideoResult, CreatePacketConsumer, VideoTask } from './video-pool.js';

const data = workerData as { nice?: number; consumer?: string } | null;
lowerThreadPriority(data?.nice ?? 0);

let analyzer: Promise<AuxAnalyzer> | undefined;
let consumerModule: Promise<{ createPacketConsumer: CreatePacketConsumer }> | undefined;

/**
 * The pool's consumer module. A caller running from its TypeScript sources (tests, `tsx` scripts)
 * names a `.ts` module, which a worker started from built JavaScript cannot import on its own: tsx's
 * ESM hooks are registered first, as spawn.ts does for a `.ts` entry.
 */
async function importConsumer(url: string): Promise<{ createPacketConsumer: CreatePacketConsumer }> {
  if (new URL(url).pathname.endsWith('.ts')) (await import('tsx/esm/api')).register();
  return import(url) as Promise<{ createPacketConsumer: CreatePacketConsumer }>;
}

serveTasks<VideoTask, VideoResult | ConsumedVideoResult | AuxAnalysis[] | AuxStep | AuxCapabilities>(
  async (task, ctx) => {
    const { signal, progress, emit } = ctx;
    if (task.kind === 'video') {
      const opts = { ...task.opts, signal, onProgress: progress, onAux: task.emitAux ? emit : undefined };
      if (!task.consume) return videoToPackets(task.file, opts);
      if (!data?.consumer) throw new Error('this video pool has no consumer module');
      const consumer = (await (consumerModule ??= importConsumer(data.consumer))).createPacketConsumer();
      const res = await videoToPackets(task.file, { ...opts, onPacket: (p) => consumer.push(p), keepCrops: false });
      if (!res.ok) return res;
      // The consumer's finish (the server's: the estimator over the whole capture, seconds for an
      // hour) is a stage of its own for whoever shows the job's progress.
      progress(1, 'estimating');
      return { ...res, consumed: await consumer.finish(res.stats) };
    }
    // The aux models (emotion, iris) load once per worker, on its first aux task.
    const a = await (analyzer ??= createAuxAnalyzer());
    if (task.kind === 'aux-capabilities') return { emotion: a.emotionAvailable, gaze: a.gazeAvailable };
    if (task.kind === 'aux-step')
      return a.step
        ? a.step(task.image, task.from, task.want)
        : { analysis: await a.analyze(task.image, task.want), anchor: null };
    // A task's images are a run of a capture's that starts at a group boundary (AUX_GROUP).
    const series = seriesFor(a, task.want);
    const out: AuxAnalysis[] = [];
    for (const img of task.images) {
      signal.throwIfAborted();
      out.push(await series.analyze(img));
    }
    return out;
  },
);
