/**
 * `videoToPackets` on worker threads (docs/media.md, "Worker threads"): each video runs in a
 * worker of its own, with its own face detector, tfjs instance and ffmpeg, so concurrent videos
 * use as many cores as the pool has workers, never share tracking state (their packets are the
 * same as each run alone) and never block the caller's event loop.
 */
import os from 'node:os';
import type { Packet } from '@vitals/protocol';
import type { AuxAnalysis } from '../aux-analyzer.js';
import type { AuxAnchor, AuxStep, AuxWant } from '../aux-series.js';
import type { VideoOptions, VideoResult, VideoStats } from '../video.js';
import { siblingModule } from './spawn.js';
import { createThreadPool } from './thread-pool.js';

/** What crosses to the worker: the file and the options that are plain data, or aux JPEGs to analyse. */
export type VideoTask =
  | { kind: 'video'; file: string; opts: VideoPoolOptions; emitAux?: boolean; consume?: boolean }
  | { kind: 'aux'; images: Uint8Array[]; want?: AuxWant }
  | { kind: 'aux-step'; image: Uint8Array; from: AuxAnchor | null; want?: AuxWant }
  | { kind: 'aux-capabilities' };

export interface AuxCapabilities {
  emotion: boolean;
  gaze: boolean;
}

export type VideoPoolOptions = Omit<VideoOptions, 'signal' | 'onProgress' | 'onAux' | 'onPacket' | 'detector'>;

/**
 * What a pool's `consumer` module makes for each consumed video, in the worker: it is handed every
 * type 1/2/3 packet as the video is followed (the crops are not kept), and its `finish` value
 * (plain data) comes back as the result's `consumed`. The server's builds the engine's trace and
 * estimates it, so an hour of video never holds its ~400 MB of crops, nor copies them between threads.
 */
export interface PacketConsumer {
  push(p: Packet): void;
  finish(stats: VideoStats): unknown;
}

/** A consumer module exports this. */
export type CreatePacketConsumer = () => PacketConsumer;

/** A consumed video's result: the packets other than the crops, and the consumer's value. */
export type ConsumedVideoResult =
  Exclude<VideoResult, { ok: true }> | (Extract<VideoResult, { ok: true }> & { consumed: unknown });

export interface VideoPool {
  /** Most videos processed at once (one worker each). */
  readonly size: number;
  /** `videoToPackets(file, opts)` in a worker; the signal aborts it (ffmpeg killed, the worker recycled if stuck). */
  run(
    file: string,
    opts?: VideoPoolOptions & { onProgress?: (fraction: number) => void; onAux?: (jpeg: Uint8Array) => void },
    signal?: AbortSignal,
  ): Promise<VideoResult>;
  /**
   * The same video through the pool's `consumer` module (`createPacketConsumer`): the crops go to
   * it as they are made, never kept or sent back. Throws when the pool has no consumer.
   */
  consume(
    file: string,
    opts?: VideoPoolOptions & {
      /** The share of the video followed; then `(1, 'estimating')` while the consumer finishes. */
      onProgress?: (fraction: number, stage?: string) => void;
      onAux?: (jpeg: Uint8Array) => void;
    },
    signal?: AbortSignal,
  ): Promise<ConsumedVideoResult>;
  /**
   * Emotion and gaze of a job's aux images, in order, in a worker: `createAuxAnalyzer().series()`
   * over them, so `images` should be a capture's from a group boundary on (AUX_GROUP: the first, or
   * a multiple of it); a single image is a full detection. `want`: what the job ordered (default
   * both; a model nobody ordered does not run).
   */
  analyzeAux(images: Uint8Array[], signal?: AbortSignal, want?: AuxWant): Promise<AuxAnalysis[]>;
  /**
   * One image of an aux series kept by the caller (`seriesOf`; a live session's): the worker's
   * `createAuxAnalyzer().step(image, from, want)`.
   */
  auxStep(image: Uint8Array, from: AuxAnchor | null, signal?: AbortSignal, want?: AuxWant): Promise<AuxStep>;
  /** Whether the emotion and iris models load (a worker loads them; the caller's thread does not). */
  auxCapabilities(): Promise<AuxCapabilities>;
  stats(): { workers: number; busy: number; queued: number };
  close(): Promise<void>;
}

/** The default pool size: the cores this process may use. */
export const defaultVideoThreads = (): number => os.availableParallelism();

/** How much lower than the caller's the video workers' (and their ffmpeg's) CPU priority is. */
export const VIDEO_WORKER_NICE = 10;

/**
 * `consumer`: a module (URL) exporting `createPacketConsumer: CreatePacketConsumer`, imported by
 * each worker on its first consumed video (`VideoPool.consume`).
 */
export function createVideoPool(
  options: { size?: number; maxQueued?: number; nice?: number; consumer?: URL } = {},
): VideoPool {
  const pool = createThreadPool<VideoTask, VideoResult | AuxAnalysis[] | AuxStep | AuxCapabilities>({
    entry: siblingModule(import.meta.url, 'video-worker'),
    size: options.size ?? defaultVideoThreads(),
    maxQueued: options.maxQueued,
    name: 'video',
    workerData: { nice: options.nice ?? VIDEO_WORKER_NICE, consumer: options.consumer?.href },
  });
  const video = (
    file: string,
    opts: Parameters<VideoPool['consume']>[1],
    signal: AbortSignal | undefined,
    consume: boolean,
  ) => {
    const { onProgress, onAux, ...plain } = opts ?? {};
    const onItem = onAux ? (v: unknown) => onAux(v as Uint8Array) : undefined;
    return pool.run({ kind: 'video', file, opts: plain, emitAux: !!onAux, consume }, { signal, onProgress, onItem });
  };
  return {
    size: pool.size,
    run(file, opts = {}, signal) {
      return video(file, opts, signal, false) as Promise<VideoResult>;
    },
    consume(file, opts = {}, signal) {
      if (!options.consumer) return Promise.reject(new Error('this video pool has no consumer module'));
      return video(file, opts, signal, true) as Promise<ConsumedVideoResult>;
    },
    analyzeAux(images, signal, want) {
      return pool.run({ kind: 'aux', images, want }, { signal }) as Promise<AuxAnalysis[]>;
    },
    auxStep(image, from, signal, want) {
      return pool.run({ kind: 'aux-step', image, from, want }, { signal }) as Promise<AuxStep>;
    },
    auxCapabilities() {
      return pool.run({ kind: 'aux-capabilities' }) as Promise<AuxCapabilities>;
    },
    stats: () => pool.stats(),
    close: () => pool.close(),
  };
}
