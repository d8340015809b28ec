/**
 * Entry of a video worker thread (video-pool.ts): runs `videoToPackets` for each task. The worker
 * keeps its module state between tasks, so the face models it loaded for its first video (its own
 * Human and tfjs instance, human-runtime.ts) serve its later ones.
 */
import { workerData } from 'node:worker_threads';
import { videoToPackets, type VideoResult } from '../video.js';
import { lowerThreadPriority } from './priority.js';
import { serveTasks } from './serve.js';
import type { VideoTask } from './video-pool.js';

lowerThreadPriority((workerData as { nice?: number } | null)?.nice ?? 0);

serveTasks<VideoTask, VideoResult>((task, { signal, progress }) =>
  videoToPackets(task.file, { ...task.opts, signal, onProgress: progress }),
);
