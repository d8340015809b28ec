/**
 * A video file in, the spec's packet stream out (ARCHITECTURE: one measuring path): probe, decode
 * with container timestamps, follow the largest face, crop and packetize, then the spec's video
 * rejections in order (rules.ts).
 */
import { stat } from 'node:fs/promises';
import { AUX_SIZE, VIDEO_MAX_DURATION_SEC, type Box, type BoxKalmanOptions, type Packet } from '@vitals/protocol';
import {
  decodeFrames,
  DECODE_THREADS,
  DecodeError,
  FramePool,
  ONE_THREAD_MAX_PIXELS,
  readFrameTimes,
  type DecodedFrame,
} from './decode.js';
import {
  FaceTracker,
  STEADY_VIDEO,
  type AuxEncoder,
  type FaceDetector,
  type Packetizer,
  type SteadyRates,
} from '@vitals/tracker';
import { resolveFfmpeg, type FfmpegPaths } from './ffmpeg.js';
import { createHumanDetector } from './human-detector.js';
import { JpegStreamEncoder } from './jpeg-encoder.js';
import { probeVideo, type ProbeInfo } from './probe.js';
import {
  faceRejection,
  median,
  reject,
  timingRejection,
  type VideoRejection,
  type VideoResult,
  type VideoStats,
  sizeRejection,
  lengthRejection,
} from './rules.js';
import { I420Frame, i420Bytes, yuvMatrixFor } from './yuv.js';

export type { VideoResult, VideoStats } from './rules.js';

export interface VideoOptions {
  /** Also emit type-4 aux JPEG crops at 2 Hz (emotion or gaze ordered). */
  aux?: boolean;
  /**
   * With `aux`: called with each aux JPEG as soon as it is encoded, in order (the same bytes, in
   * the same order, as the type-4 chunks of the result reassemble to), so their analysis can start
   * while the video is still being followed.
   */
  onAux?: (jpeg: Uint8Array) => void;
  /**
   * Called with each type 1/2/3 packet as it is made, in the order of the result's packets (aux
   * chunks are merged into the result only).
   */
  onPacket?: (p: Packet) => void;
  /**
   * Keep the type-1 face crops in the result (default true). false with `onPacket`: the caller
   * consumes them as they come (an hour of video is ~400 MB of crops), and the result holds the
   * other packets.
   */
  keepCrops?: boolean;
  /** Called with the fraction decoded, 0..1, at most about every 1 %. */
  onProgress?: (fraction: number) => void;
  /** Aborting kills ffmpeg and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Face detector, used by this video alone; defaults to a Human detector leased for this call. */
  detector?: FaceDetector;
  /** Landmark analyses per second (other frames are interpolated). Default 4. */
  analysisHz?: number;
  /** Seconds between full detections (BlazeFace); in between FaceMesh tracks. Default 2. */
  redetectSec?: number;
  /**
   * Slower analysis rates while the face is steady (FAST_VIDEO uses STEADY_VIDEO: 2 Hz, a full
   * detection every 4 s). Default: none. Costs accuracy on UBFC-rPPG (docs/media.md, "Fast settings").
   */
  steady?: SteadyRates | null;
  /**
   * Decoded size as a fraction of the source's (default 1; FAST_VIDEO 0.5; always 1 with `aux`):
   * the crops and the face analysis run on the decoded frame; face widths are still reported in
   * source pixels. Never below SHORT_SIDE_MIN pixels on the shorter side, never above MAX_DECODE_SIDE.
   */
  decodeScale?: number;
  /**
   * Decode to the stream's own YUV and convert in JS what is read (yuv.ts), where that conversion
   * reproduces ffmpeg's; default true. false: ffmpeg converts every frame to RGB (the same bytes, more CPU).
   */
  yuv?: boolean;
  /** Wall-clock bound on decoding and following faces (default `decodeBudgetMs` of the duration). */
  decodeBudgetMs?: number;
  /**
   * Longest video taken, seconds (default VIDEO_MAX_DURATION_SEC, one hour): refused from the
   * container's duration, or once the decoded frames pass it (`unsupported_media`).
   */
  maxDurationSec?: number;
  /** Tuning of the crop's Kalman smoother (defaults: see VIDEO_KALMAN). */
  kalman?: BoxKalmanOptions;
  /** Evaluation only: the tracker's `cropBox` (scripts/eval/box-sensitivity.ts). */
  cropBox?: (box: Box) => Box;
  /**
   * Evaluation only: frames before this index are decoded and dropped, so the frames the tracker
   * analyses fall at another phase, as a live capture's do (box-sensitivity.ts --phases).
   */
  startFrame?: number;
}

/** Longest side decoded; larger videos are scaled down by ffmpeg (face widths are reported in source pixels). */
const MAX_DECODE_SIDE = 1280;
/**
 * The fast settings (issue 18): half-size decoding (ffmpeg's RGB conversion, the pipe and Human's
 * whole-frame tensor work shrink fourfold) and steady analysis rates. About 2.5x less CPU, but the
 * half-size crops publish fewer UBFC-rPPG subjects (fewer on six of eight crop boxes), so they are
 * not the default (docs/media.md, "The fast settings judged against that spread").
 */
export const FAST_VIDEO: Pick<VideoOptions, 'decodeScale' | 'steady'> = { decodeScale: 0.5, steady: STEADY_VIDEO };
/** Shorter side never decoded smaller than this (a 320x240 source stays whole). */
const SHORT_SIDE_MIN = 240;
/** Crop smoother for video: the protocol's defaults, which the browser SDK uses too (docs/media.md). */
export const VIDEO_KALMAN: BoxKalmanOptions = {};
/** Share of analysed frames with two or more faces from which `multipleFaces` is set. */
const MULTI_FACE_SHARE = 0.05;

/**
 * Decodes `filePath`, follows the (largest) face and returns the packets a live session would have
 * sent, or the first failing video rejection.
 *
 * @example
 * const r = await videoToPackets('clip.mp4', { aux: false });
 * if (r.ok) estimateOffline(r.packets); else console.log(r.code);
 */
export async function videoToPackets(filePath: string, opts: VideoOptions = {}): Promise<VideoResult> {
  opts.signal?.throwIfAborted();
  const pre = await preflight(filePath, opts.maxDurationSec);
  if (!pre.ok) return pre;
  const { bins, info } = pre;
  const [detector, times] = await Promise.all([
    opts.detector ?? createHumanDetector(),
    readFrameTimes(bins.ffprobe, filePath),
  ]);
  // A time bound per job (issue 19): a video that decodes this slowly is refused, not waited for.
  const budgetMs = opts.decodeBudgetMs ?? decodeBudgetMs(info.durationSec);
  const budget = AbortSignal.timeout(Math.ceil(budgetMs));
  const signal = opts.signal ? AbortSignal.any([opts.signal, budget]) : budget;
  let run: FaceRun;
  try {
    run = await followFaces(filePath, info, bins, detector, times, { ...opts, signal });
  } catch (err) {
    if (err instanceof TooLong) return lengthRejection(Infinity, baseStats(info), opts.maxDurationSec)!;
    if (budget.aborted && !opts.signal?.aborted)
      return reject(
        'unsupported_media',
        `The video could not be decoded within ${(budgetMs / 1000).toFixed(budgetMs < 10_000 ? 1 : 0)} s.`,
        baseStats(info),
      );
    if (err instanceof DecodeError)
      return reject('unsupported_media', 'The video stream could not be decoded.', baseStats(info));
    throw err;
  } finally {
    if (!opts.detector) detector.release?.();
  }
  const stats = videoStats(info, run, detector.name);
  opts.onProgress?.(1);
  return (
    timingRejection(stats.durationSec, stats.fps, stats) ??
    faceRejection(stats) ?? { ok: true, packets: run.packets, stats }
  );
}

/** One minute plus ten times the video's length, at most 30 minutes (docs/decisions.md, "Batch and uploads"). */
export function decodeBudgetMs(durationSec: number): number {
  const d = Number.isFinite(durationSec) && durationSec > 0 ? durationSec : 180;
  return Math.ceil(Math.min(30 * 60_000, 60_000 + 10_000 * d));
}

const baseStats = (info: ProbeInfo): Partial<VideoStats> => ({
  width: info.width,
  height: info.height,
  codec: info.codec,
  container: info.container,
});

/** Readable, supported, and long and fast enough by the container's own figures (confirmed after decoding). */
async function preflight(
  filePath: string,
  maxDurationSec: number | undefined,
): Promise<{ ok: true; bins: FfmpegPaths; info: ProbeInfo } | VideoRejection> {
  const st = await stat(filePath).catch(() => null);
  if (!st?.isFile()) return reject('unsupported_media', 'The video file cannot be read.');
  const bins = resolveFfmpeg();
  const probed = await probeVideo(bins.ffprobe, filePath);
  if (!probed.ok) return reject('unsupported_media', probed.message);
  const { info } = probed;
  const finite = (v: number): number => (Number.isFinite(v) ? v : Infinity);
  const rateFps = Number.isFinite(info.fps) ? info.fps : info.frameCount / info.durationSec;
  const tooBig = sizeRejection(info.width, info.height, rateFps, baseStats(info));
  if (tooBig) return tooBig;
  const tooLong = lengthRejection(
    info.durationSec,
    { ...baseStats(info), durationSec: info.durationSec },
    maxDurationSec,
  );
  if (tooLong) return tooLong;
  const early = timingRejection(finite(info.durationSec), finite(info.fps), {
    ...baseStats(info),
    durationSec: info.durationSec,
    fps: info.fps,
  });
  return early ?? { ok: true, bins, info };
}

export function decodeSize(
  info: Pick<ProbeInfo, 'width' | 'height'>,
  scale: number,
): { width: number; height: number; scale: boolean; scaleBack: number } {
  const side = Math.max(info.width, info.height);
  const short = Math.min(info.width, info.height);
  const f = Math.min(MAX_DECODE_SIDE / side, Math.max(scale, SHORT_SIDE_MIN / short));
  if (f >= 1) return { width: info.width, height: info.height, scale: false, scaleBack: 1 };
  const width = Math.max(2, Math.round((info.width * f) / 2) * 2);
  const height = Math.max(2, Math.round((info.height * f) / 2) * 2);
  return { width, height, scale: true, scaleBack: info.width / width };
}

interface FaceRun {
  packets: Packet[];
  packetizer: Packetizer;
  /** Decoded span plus one median frame interval. */
  durationSec: number;
}

/** The decode loop: frames from ffmpeg into the face tracker (@vitals/tracker), packets in order. */
async function followFaces(
  file: string,
  info: ProbeInfo,
  bins: FfmpegPaths,
  detector: FaceDetector,
  times: number[],
  opts: VideoOptions,
): Promise<FaceRun> {
  const size = decodeSize(info, opts.aux ? 1 : (opts.decodeScale ?? 1));
  const nominalFps = Number.isFinite(info.fps) ? info.fps : 30;
  const progress = progressReporter(
    opts.onProgress,
    Number.isFinite(info.frameCount) ? info.frameCount : info.durationSec * nominalFps,
  );
  // The decoder's own YUV where the JS conversion reproduces ffmpeg's (yuv.ts); RGB from ffmpeg otherwise.
  const matrix = size.scale || opts.yuv === false ? null : yuvMatrixFor(info, size.width, size.height);
  const rgbBytes = size.width * size.height * 3;
  const pool = new FramePool(matrix ? i420Bytes(size.width, size.height) : rgbBytes);
  const rgbPool = new FramePool(rgbBytes);
  const auxEncoder = opts.aux ? new JpegStreamEncoder(bins.ffmpeg, AUX_SIZE, AUX_SIZE) : null;
  const tracker = new FaceTracker<DecodedFrame | I420Frame>({
    detector,
    analysisHz: opts.analysisHz,
    redetectSec: opts.redetectSec,
    steady: opts.steady ?? undefined,
    nominalFps,
    scaleBack: size.scaleBack,
    kalman: opts.kalman ?? VIDEO_KALMAN,
    cropBox: opts.cropBox,
    onPacket: opts.onPacket,
    keepCrops: opts.keepCrops,
    aux: auxEncoder && opts.onAux ? tapped(auxEncoder, opts.onAux) : auxEncoder,
    onFrameDone: (frame) => {
      if (frame instanceof I420Frame) {
        pool.give(frame.yuv);
        rgbPool.give(frame.data);
      } else pool.give(frame.data);
    },
  });
  const stamps: number[] = [];
  const maxSec = opts.maxDurationSec ?? VIDEO_MAX_DURATION_SEC;
  try {
    for await (const raw of decodeFrames(bins.ffmpeg, file, {
      ...size,
      threads: info.width * info.height <= ONE_THREAD_MAX_PIXELS ? 1 : DECODE_THREADS,
      pixFmt: matrix ? 'yuv420p' : 'rgb24',
      nominalFps,
      times,
      pool,
      signal: opts.signal,
    })) {
      const { index, tSec, data, width, height } = raw;
      if (index < (opts.startFrame ?? 0)) {
        pool.give(data);
        continue;
      }
      // A container that does not say its duration (or says less) is stopped at the cap, not decoded for hours.
      if (stamps.length > 0 && tSec - stamps[0] > maxSec) throw new TooLong();
      const frame = matrix ? new I420Frame(index, tSec, data, rgbPool.take(), width, height, matrix) : raw;
      stamps.push(frame.tSec);
      await tracker.push(frame);
      progress(frame.index);
    }
    const packets = await tracker.finish();
    return { packets, packetizer: tracker.packetizer, durationSec: spanWithLastFrame(stamps) };
  } catch (err) {
    auxEncoder?.kill();
    throw err;
  }
}

/** The decoded frames passed the longest duration taken. */
class TooLong extends Error {}

/** `encoder`, handing each JPEG to `onJpeg` as it resolves (in order: the encoder answers in order). */
function tapped(encoder: JpegStreamEncoder, onJpeg: (jpeg: Uint8Array) => void): AuxEncoder {
  return {
    encode(rgb) {
      const jpeg = encoder.encode(rgb);
      // The caller's failure is not the video's: it meets it in its own analysis.
      jpeg.then(
        (j) => {
          try {
            onJpeg(j);
          } catch {
            /* ignored */
          }
        },
        () => undefined,
      );
      return jpeg;
    },
    finish: () => encoder.finish(),
  };
}

function spanWithLastFrame(stamps: number[]): number {
  if (stamps.length < 2) return 0;
  const intervals = stamps.slice(1).map((t, i) => t - stamps[i]);
  return stamps[stamps.length - 1] - stamps[0] + median(intervals);
}

function videoStats(info: ProbeInfo, run: FaceRun, detector: string): VideoStats {
  const p = run.packetizer;
  return {
    durationSec: run.durationSec,
    fps: run.durationSec > 0 ? p.framesDecoded / run.durationSec : 0,
    width: info.width,
    height: info.height,
    codec: info.codec,
    container: info.container,
    framesDecoded: p.framesDecoded,
    framesWithFace: p.framesWithFace,
    facePresence: p.framesDecoded ? p.framesWithFace / p.framesDecoded : 0,
    medianFaceWidthPx: median(p.faceWidthsPx),
    multipleFaces: p.analysed > 0 && p.analysedWithSeveral / p.analysed >= MULTI_FACE_SHARE,
    maxFacesSeen: p.maxFacesSeen,
    detector,
    bitRateBps: Number.isFinite(info.bitRate) && info.bitRate > 0 ? info.bitRate : null,
  };
}

/** Calls `onProgress` with the decoded fraction, at most every 1 % and never 1 (sent at the end). */
function progressReporter(
  onProgress: ((f: number) => void) | undefined,
  expectedFrames: number,
): (index: number) => void {
  let last = 0;
  return (index) => {
    if (!onProgress || !(expectedFrames > 0)) return;
    const p = Math.min(0.99, (index + 1) / expectedFrames);
    if (p - last >= 0.01) {
      last = p;
      onProgress(p);
    }
  };
}
