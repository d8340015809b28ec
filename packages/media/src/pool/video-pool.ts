/**
 * `videoToPackets` on worker threads (docs/media.md, "Worker threads"): each video runs in a
 * worker of its own, with its own face detector, tfjs instance and ffmpeg, so concurrent videos
 * use as many cores as the pool has workers, never share tracking state (their packets are the
 * same as each run alone) and never block the caller's event loop.
 */
import os from 'node:os';
import type { AuxAnalysis } from '../aux-analyzer.js';
import type { VideoOptions, VideoResult } from '../video.js';
import { siblingModule } from './spawn.js';
import { createThreadPool } from './thread-pool.js';

/** What crosses to the worker: the file and the options that are plain data, or aux JPEGs to analyse. */
export type VideoTask =
  | { kind: 'video'; file: string; opts: VideoPoolOptions; emitAux?: boolean }
  | { kind: 'aux'; images: Uint8Array[] }
  | { kind: 'aux-capabilities' };

export interface AuxCapabilities {
  emotion: boolean;
  gaze: boolean;
}

export type VideoPoolOptions = Omit<VideoOptions, 'signal' | 'onProgress' | 'onAux' | 'detector'>;

export interface VideoPool {
  /** Most videos processed at once (one worker each). */
  readonly size: number;
  /** `videoToPackets(file, opts)` in a worker; the signal aborts it (ffmpeg killed, the worker recycled if stuck). */
  run(
    file: string,
    opts?: VideoPoolOptions & { onProgress?: (fraction: number) => void; onAux?: (jpeg: Uint8Array) => void },
    signal?: AbortSignal,
  ): Promise<VideoResult>;
  /** `createAuxAnalyzer().analyze` of each image, in order, in a worker (emotion and gaze of a job). */
  analyzeAux(images: Uint8Array[], signal?: AbortSignal): Promise<AuxAnalysis[]>;
  /** Whether the emotion and iris models load (a worker loads them; the caller's thread does not). */
  auxCapabilities(): Promise<AuxCapabilities>;
  stats(): { workers: number; busy: number; queued: number };
  close(): Promise<void>;
}

/** The default pool size: the cores this process may use. */
export const defaultVideoThreads = (): number => os.availableParallelism();

/** How much lower than the caller's the video workers' (and their ffmpeg's) CPU priority is. */
export const VIDEO_WORKER_NICE = 10;

export function createVideoPool(options: { size?: number; maxQueued?: number; nice?: number } = {}): VideoPool {
  const pool = createThreadPool<VideoTask, VideoResult | AuxAnalysis[] | AuxCapabilities>({
    entry: siblingModule(import.meta.url, 'video-worker'),
    size: options.size ?? defaultVideoThreads(),
    maxQueued: options.maxQueued,
    name: 'video',
    workerData: { nice: options.nice ?? VIDEO_WORKER_NICE },
  });
  return {
    size: pool.size,
    run(file, opts = {}, signal) {
      const { onProgress, onAux, ...plain } = opts;
      const onItem = onAux ? (v: unknown) => onAux(v as Uint8Array) : undefined;
      return pool.run(
        { kind: 'video', file, opts: plain, emitAux: !!onAux },
        { signal, onProgress, onItem },
      ) as Promise<VideoResult>;
    },
    analyzeAux(images, signal) {
      return pool.run({ kind: 'aux', images }, { signal }) as Promise<AuxAnalysis[]>;
    },
    auxCapabilities() {
      return pool.run({ kind: 'aux-capabilities' }) as Promise<AuxCapabilities>;
    },
    stats: () => pool.stats(),
    close: () => pool.close(),
  };
}
