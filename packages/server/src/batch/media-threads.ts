/**
 * Where a batch job's heavy work runs (docs/media.md, "Worker threads"; docs/decisions.md, "Batch
 * and uploads"): with `VITALS_MEDIA_THREADS` > 0 (the default: the cores available) each video runs
 * in a worker thread of its own (`@vitals/media`'s video pool: its own face models and ffmpeg), and
 * the offline estimator of a long capture, or a large frames file's decoding and estimate, on an
 * estimator thread; the API and live sessions on the main thread never wait behind them. With 0,
 * all of it runs on the main thread as before (a fallback, and a reference for the benchmarks).
 * Either way the measurement is the same: the code is the same, only its thread differs.
 */
import type { AnalyzeOptions, EngineMeasurement, RgbTrace } from '@vitals/engine';
import type { Packet } from '@vitals/protocol';
import type { AuxAnalyzer } from '@vitals/media';
import {
  AUX_GROUP,
  type AuxAnalysis,
  type AuxWant,
  type ThreadPool,
  type VideoPool,
  type VideoPoolOptions,
  type VideoResult,
} from '@vitals/media/threads';
import type { VideoPacketConsumer } from './video-consumer.js';
import type { EstimateOutput, EstimateTask, FramesVerdict } from './estimate-worker.js';
import { checkFramesFile } from './frames.js';
import { reassembleAux } from './aux.js';

/**
 * Aux JPEGs per video worker below which a job's emotion and gaze analysis is not split across
 * workers (each worker loads the aux models once, ~0.5-1 s of CPU; an analysis is ~20-40 ms). A
 * multiple of AUX_GROUP: the parts of a job start at group boundaries, so a split does not change
 * an analysis (aux-analyzer.ts `AuxSeries`).
 */
export const AUX_MIN_PER_WORKER = 2 * AUX_GROUP;

/** Trace samples above which a live session's final analysis runs on a thread (90 s at 30 fps: ~40-80 ms inline). */
export const THREAD_MIN_CROPS = 2700;
/** Frames files above which decoding and the estimate run on a thread (a 30 s capture is ~3.6 MB). */
export const THREAD_MIN_FRAMES_BYTES = 8 << 20;

export interface FramesOutcome {
  check: FramesVerdict;
  measurement?: EngineMeasurement;
  auxImages: Uint8Array[];
}

/**
 * A video job's outcome: the video's rejection, or its statistics, its packets other than the face
 * crops (telemetry, aux chunks) and the measurement of its crops.
 */
export type MeasuredVideo =
  Exclude<VideoResult, { ok: true }> | (Extract<VideoResult, { ok: true }> & { measurement: EngineMeasurement });

export interface MediaThreads {
  readonly threads: number;
  /**
   * Follows the face of a video and estimates it where it was followed (a video worker; the main
   * thread with no threads): the crops go into the engine's trace as they are made and are never
   * kept (video-consumer.ts), so a video's memory does not grow with its crops.
   */
  video(
    file: string,
    opts: VideoPoolOptions & {
      /** The share of the video followed, then `(1, 'estimating')` while its capture is estimated. */
      onProgress?: (f: number, stage?: string) => void;
      onAux?: (jpeg: Uint8Array) => void;
    },
    signal: AbortSignal,
  ): Promise<MeasuredVideo>;
  /** A live session's final analysis (`analyzeTrace` of its estimator's input; a thread for long ones). */
  analyzeTrace(input: { trace: RgbTrace; opts: AnalyzeOptions }): Promise<EngineMeasurement>;
  /** Decodes and checks a frames file and estimates it (aux: its reassembled aux JPEGs too). */
  frames(bytes: Uint8Array, aux: boolean, signal: AbortSignal): Promise<FramesOutcome>;
  /**
   * The aux analyzer (emotion, gaze) over a job's aux JPEGs on the video workers, split in order
   * across them (at least AUX_MIN_PER_WORKER images each); `null` with no threads (the caller
   * analyses them on the main thread).
   */
  auxAnalyses(images: Uint8Array[], signal: AbortSignal, want?: AuxWant): Promise<AuxAnalysis[] | null>;
  /** The aux models' availability, found on a video worker; `null` with no threads. */
  auxCapabilities(): Promise<{ emotion: boolean; gaze: boolean }> | null;
  /**
   * Live sessions' emotion and gaze: an aux analyzer whose models run on worker threads of their
   * own (never behind a video job, never on the event loop; up to `threads` of them, started as
   * the load needs them); `null` with no threads (the caller loads the models on the main thread).
   * Rejects when the first worker cannot start.
   */
  liveAux(): Promise<AuxAnalyzer> | null;
  /** The pools started so far (workers, busy, queued). */
  stats(): { video?: PoolStats; estimator?: PoolStats; liveAux?: PoolStats };
  close(): Promise<void>;
}

type PoolStats = { workers: number; busy: number; queued: number };

/** `nice`: how much lower the threads' CPU priority is than the main thread's (docs/media.md). */
export function createMediaThreads(threads: number, nice?: number): MediaThreads {
  let videoPool: Promise<VideoPool> | undefined;
  let estimator: Promise<ThreadPool<EstimateTask, EstimateOutput>> | undefined;
  // Loaded on first use: the media stack (ffmpeg wrappers, face models) is heavy to import.
  let capabilities: Promise<{ emotion: boolean; gaze: boolean }> | undefined;
  let liveAux: Promise<AuxAnalyzer> | undefined;
  const started: { video?: VideoPool; estimator?: ThreadPool<EstimateTask, EstimateOutput>; liveAux?: VideoPool } = {};
  const getVideoPool = (): Promise<VideoPool> =>
    (videoPool ??= import('@vitals/media/threads').then(
      (m) =>
        (started.video = m.createVideoPool({
          size: threads,
          nice,
          consumer: m.siblingModule(import.meta.url, 'video-consumer'),
        })),
    ));
  const getEstimator = (): Promise<ThreadPool<EstimateTask, EstimateOutput>> =>
    (estimator ??= import('@vitals/media/threads').then(
      (m) =>
        (started.estimator = m.createThreadPool<EstimateTask, EstimateOutput>({
          entry: m.siblingModule(import.meta.url, 'estimate-worker'),
          size: threads,
          name: 'estimator',
          workerData: { nice: nice ?? m.VIDEO_WORKER_NICE },
        })),
    ));
  const inline = async (packets: Packet[]): Promise<EngineMeasurement> =>
    (await import('@vitals/engine')).estimateOffline(packets);

  return {
    threads,
    async video(file, opts, signal) {
      if (threads === 0) {
        const [{ videoToPackets }, { createPacketConsumer }] = await Promise.all([
          import('@vitals/media'),
          import('./video-consumer.js'),
        ]);
        const consumer = createPacketConsumer();
        const res = await videoToPackets(file, { ...opts, signal, onPacket: consumer.push, keepCrops: false });
        if (!res.ok) return res;
        opts.onProgress?.(1, 'estimating');
        return { ...res, measurement: consumer.finish(res.stats) };
      }
      const res = await (await getVideoPool()).consume(file, opts, signal);
      if (!res.ok) return res;
      const { consumed, ...rest } = res;
      return { ...rest, measurement: consumed as ReturnType<VideoPacketConsumer['finish']> };
    },
    auxCapabilities() {
      if (threads === 0) return null;
      return (capabilities ??= getVideoPool()
        .then((p) => p.auxCapabilities())
        .catch((err: unknown) => {
          capabilities = undefined; // asked again next time
          throw err;
        }));
    },
    async auxAnalyses(images, signal, want) {
      if (threads === 0) return null;
      if (!images.length) return [];
      const pool = await getVideoPool();
      // Split across the pool's workers, in order and at group boundaries (AUX_GROUP): an image's
      // analysis depends only on itself and its group's first image, so the analyses are the same
      // wherever they run, and a 60 s video's ~120 images take about half the time on two cores.
      const parts = Math.max(1, Math.min(pool.size, Math.floor(images.length / AUX_MIN_PER_WORKER)));
      if (parts === 1) return pool.analyzeAux(images, signal, want);
      const per = AUX_GROUP * Math.ceil(images.length / parts / AUX_GROUP);
      const chunks: Uint8Array[][] = [];
      for (let i = 0; i < images.length; i += per) chunks.push(images.slice(i, i + per));
      return (await Promise.all(chunks.map((c) => pool.analyzeAux(c, signal, want)))).flat();
    },
    async analyzeTrace({ trace, opts }) {
      if (threads === 0 || trace.n <= THREAD_MIN_CROPS)
        return (await import('@vitals/engine')).analyzeTrace(trace, opts);
      const out = await (await getEstimator()).run({ kind: 'trace', trace, opts });
      if (out.kind !== 'trace') throw new Error('estimator thread answered another task');
      return out.measurement;
    },
    async frames(bytes, aux, signal) {
      if (threads === 0 || bytes.byteLength <= THREAD_MIN_FRAMES_BYTES) {
        const check = checkFramesFile(bytes);
        if (!check.ok) return { check, auxImages: [] };
        return {
          check,
          measurement: await inline(check.packets),
          auxImages: aux ? reassembleAux(check.packets) : [],
        };
      }
      // The job's own copy of the object: moved to the thread, not copied, when it owns its buffer.
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      const transfer = own && bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : [];
      const out = await (await getEstimator()).run({ kind: 'frames', bytes, aux }, { signal, transfer });
      if (out.kind !== 'frames') throw new Error('estimator thread answered another task');
      return out;
    },
    liveAux() {
      if (threads === 0) return null;
      // Workers shared by every live session of the process, as many as the video pool may have,
      // each started only when every one before it is busy (one serves ~40 analyses a second, ~20
      // sessions at 2 Hz). Each session has at most one analysis in flight (stream/aux-analysis.ts),
      // so the queue is bounded by the sessions, and a session whose analysis waits skips its next
      // aux frames rather than piling them up; its series' state travels with each task, so any
      // worker can take its next frame.
      return (liveAux ??= import('@vitals/media/threads').then(async (m) => {
        const pool = (started.liveAux = m.createVideoPool({ size: threads, nice }));
        try {
          const caps = await pool.auxCapabilities();
          const analyzer: AuxAnalyzer = {
            emotionAvailable: caps.emotion,
            gazeAvailable: caps.gaze,
            analyze: async (jpeg, want) => (await pool.analyzeAux([jpeg], undefined, want))[0] ?? {},
            // A session's own series, its images analysed one at a time on the workers.
            step: (jpeg, from, want) => pool.auxStep(jpeg, from, undefined, want),
            series: (want) => m.seriesOf((jpeg, from) => pool.auxStep(jpeg, from, undefined, want)),
          };
          return analyzer;
        } catch (err) {
          // Asked again by the next session that orders emotion or gaze.
          liveAux = undefined;
          started.liveAux = undefined;
          await pool.close();
          throw err;
        }
      }));
    },
    stats: () => ({
      video: started.video?.stats(),
      estimator: started.estimator?.stats(),
      liveAux: started.liveAux?.stats(),
    }),
    async close() {
      const pools = await Promise.all([
        videoPool,
        estimator,
        liveAux?.then(
          () => started.liveAux,
          () => undefined,
        ),
      ]);
      await Promise.all(pools.map((p) => p?.close()));
    },
  };
}
