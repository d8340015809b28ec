/**
 * A video file in, the spec's packet stream out (ARCHITECTURE: one measuring path). Checks the
 * spec's video rejections in order (CLARIFICATIONS 22): unsupported media, too short, frame rate,
 * face presence, face size. Bitrate is never a rejection (CLARIFICATIONS 25).
 */
import { stat } from 'node:fs/promises';
import {
  AUX_SIZE,
  VIDEO_MIN_DURATION_SEC,
  VIDEO_MIN_FACE_PRESENCE,
  VIDEO_MIN_FACE_WIDTH_PX,
  VIDEO_MIN_FPS,
  type BoxKalmanOptions,
  type Packet,
  type VideoRejectionCode,
} from '@vitals/protocol';
import { decodeFrames, DecodeError, FramePool, readFrameTimes, type DecodedFrame } from './decode.js';
import type { FaceDetector } from './detector.js';
import { resolveFfmpeg } from './ffmpeg.js';
import { createHumanDetector } from './human-detector.js';
import { JpegStreamEncoder } from './jpeg-encoder.js';
import { Packetizer } from './packetizer.js';
import { probeVideo, type ProbeInfo } from './probe.js';
import { FrameScheduler, largestFace, type ScheduledFrame } from './schedule.js';

export interface VideoStats {
  durationSec: number;
  fps: number;
  width: number;
  height: number;
  codec: string;
  container: string;
  framesDecoded: number;
  framesWithFace: number;
  /** framesWithFace / framesDecoded. */
  facePresence: number;
  /** Median width of the face box in source pixels over frames with a face (0 when none). */
  medianFaceWidthPx: number;
  /** Two or more faces in at least 5 % of analysed frames; the largest face is followed. */
  multipleFaces: boolean;
  maxFacesSeen: number;
  detector: string;
}

export type VideoResult =
  | { ok: true; packets: Packet[]; stats: VideoStats }
  | { ok: false; code: VideoRejectionCode; message: string; stats?: Partial<VideoStats> };

export interface VideoOptions {
  /** Also emit type-4 aux JPEG crops at 2 Hz (emotion or gaze ordered). */
  aux?: boolean;
  /** Called with the fraction decoded, 0..1, at most about every 1 %. */
  onProgress?: (fraction: number) => void;
  /** Aborting kills ffmpeg and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Face detector; defaults to the shared Human detector. */
  detector?: FaceDetector;
  /** Landmark analyses per second (other frames are interpolated). Default 4. */
  analysisHz?: number;
  /** Seconds between full detections (BlazeFace); in between FaceMesh tracks. Default 2. */
  redetectSec?: number;
  /** Tuning of the crop's Kalman smoother (defaults: see VIDEO_KALMAN). */
  kalman?: BoxKalmanOptions;
}

/** Longest side decoded; larger videos are scaled down by ffmpeg (face widths are reported in source pixels). */
const MAX_DECODE_SIDE = 1280;
/** Crop smoother for video: the protocol's defaults, which the browser SDK uses too (docs/media.md). */
export const VIDEO_KALMAN: BoxKalmanOptions = {};
/** Share of analysed frames with two or more faces from which `multipleFaces` is set. */
const MULTI_FACE_SHARE = 0.05;

const reject = (code: VideoRejectionCode, message: string, stats?: Partial<VideoStats>): VideoResult => ({ ok: false, code, message, stats });

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = Float64Array.from(values).sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function decodeSize(info: ProbeInfo): { width: number; height: number; scale: boolean; scaleBack: number } {
  const side = Math.max(info.width, info.height);
  if (side <= MAX_DECODE_SIDE) return { width: info.width, height: info.height, scale: false, scaleBack: 1 };
  const f = MAX_DECODE_SIDE / side;
  const width = Math.max(2, Math.round((info.width * f) / 2) * 2);
  const height = Math.max(2, Math.round((info.height * f) / 2) * 2);
  return { width, height, scale: true, scaleBack: info.width / width };
}

/** The rules on timing, in spec order; null when both pass. */
function timingRejection(durationSec: number, fps: number, stats: Partial<VideoStats>): VideoResult | null {
  if (durationSec < VIDEO_MIN_DURATION_SEC)
    return reject('too_short', `The video lasts ${durationSec.toFixed(1)} s; at least ${VIDEO_MIN_DURATION_SEC} s is needed.`, stats);
  if (fps < VIDEO_MIN_FPS)
    return reject('insufficient_frame_rate', `The video runs at ${fps.toFixed(1)} fps; at least ${VIDEO_MIN_FPS} fps is needed.`, stats);
  return null;
}

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
  const st = await stat(filePath).catch(() => null);
  if (!st?.isFile()) return reject('unsupported_media', 'The video file cannot be read.');
  const bins = resolveFfmpeg();
  const probed = await probeVideo(bins.ffprobe, filePath);
  if (!probed.ok) return reject('unsupported_media', probed.message);
  const info = probed.info;
  const base: Partial<VideoStats> = { width: info.width, height: info.height, codec: info.codec, container: info.container };
  // Early answer from the container's own figures; confirmed on the decoded timestamps below.
  const early = timingRejection(
    Number.isFinite(info.durationSec) ? info.durationSec : Infinity,
    Number.isFinite(info.fps) ? info.fps : Infinity,
    { ...base, durationSec: info.durationSec, fps: info.fps },
  );
  if (early) return early;

  const [detector, times] = await Promise.all([opts.detector ?? createHumanDetector(), readFrameTimes(bins.ffprobe, filePath)]);
  const size = decodeSize(info);
  const analysisPeriod = 1 / (opts.analysisHz ?? 4);
  const redetectSec = opts.redetectSec ?? 2;
  const nominalFps = Number.isFinite(info.fps) ? info.fps : 30;
  const expectedFrames = Number.isFinite(info.frameCount) ? info.frameCount : info.durationSec * nominalFps;
  const track = {};
  const scheduler = new FrameScheduler();
  const auxEncoder = opts.aux ? new JpegStreamEncoder(bins.ffmpeg, AUX_SIZE, AUX_SIZE) : null;
  const packetizer = new Packetizer({ aux: auxEncoder, scaleBack: size.scaleBack, kalman: opts.kalman ?? VIDEO_KALMAN });
  let nextAnalysis = -Infinity;
  let nextFresh = -Infinity;
  let lastFaceSeen = false;
  let lastProgress = 0;
  let first = NaN;
  let last = NaN;
  const intervals: number[] = [];
  let packets: Packet[] = [];

  try {
    const pool = new FramePool(size.width * size.height * 3);
    const emit = (list: ScheduledFrame[]): void => {
      for (const s of list) {
        packetizer.push(s);
        pool.give(s.frame.data);
      }
    };
    const frames = decodeFrames(bins.ffmpeg, filePath, { ...size, nominalFps, times, pool, signal: opts.signal });
    for await (const frame of frames) {
      if (Number.isNaN(first)) first = frame.tSec;
      else intervals.push(frame.tSec - last);
      last = frame.tSec;
      // Half a frame of slack so the analysed frames keep a steady stride (30 fps at 4 Hz: 7 or 8).
      if (frame.tSec >= nextAnalysis - 0.5 / nominalFps) {
        const fresh = frame.tSec >= nextFresh || !lastFaceSeen;
        const faces = await detector.detect(frame, { fresh, track });
        if (fresh) nextFresh = frame.tSec + redetectSec;
        nextAnalysis = frame.tSec + analysisPeriod;
        const face = largestFace(faces);
        lastFaceSeen = face !== null;
        emit(scheduler.analysed(frame, { face, faceCount: faces.length }));
      } else {
        scheduler.hold(frame);
      }
      report(frame, opts, expectedFrames, (p) => (lastProgress = p), lastProgress);
    }
    emit(scheduler.flush());
    packets = await packetizer.finish();
  } catch (err) {
    auxEncoder?.kill();
    if (err instanceof DecodeError) return reject('unsupported_media', 'The video stream could not be decoded.', base);
    throw err;
  }

  const span = last - first;
  const durationSec = packetizer.framesDecoded > 1 ? span + median(intervals) : 0;
  const fps = durationSec > 0 ? packetizer.framesDecoded / durationSec : 0;
  const stats: VideoStats = {
    durationSec,
    fps,
    width: info.width,
    height: info.height,
    codec: info.codec,
    container: info.container,
    framesDecoded: packetizer.framesDecoded,
    framesWithFace: packetizer.framesWithFace,
    facePresence: packetizer.framesDecoded ? packetizer.framesWithFace / packetizer.framesDecoded : 0,
    medianFaceWidthPx: median(packetizer.faceWidthsPx),
    multipleFaces: packetizer.analysed > 0 && packetizer.analysedWithSeveral / packetizer.analysed >= MULTI_FACE_SHARE,
    maxFacesSeen: packetizer.maxFacesSeen,
    detector: detector.name,
  };
  opts.onProgress?.(1);
  const timing = timingRejection(durationSec, fps, stats);
  if (timing) return timing;
  if (stats.facePresence < VIDEO_MIN_FACE_PRESENCE)
    return reject(
      'face_not_detected',
      `A face was found in ${(stats.facePresence * 100).toFixed(0)} % of frames; at least ${VIDEO_MIN_FACE_PRESENCE * 100} % is needed.`,
      stats,
    );
  if (stats.medianFaceWidthPx < VIDEO_MIN_FACE_WIDTH_PX)
    return reject(
      'face_too_small',
      `The face is ${stats.medianFaceWidthPx.toFixed(0)} px wide (median); at least ${VIDEO_MIN_FACE_WIDTH_PX} px is needed.`,
      stats,
    );
  return { ok: true, packets, stats };
}

function report(frame: DecodedFrame, opts: VideoOptions, expected: number, set: (p: number) => void, lastP: number): void {
  if (!opts.onProgress || !(expected > 0)) return;
  const p = Math.min(0.99, (frame.index + 1) / expected);
  if (p - lastP >= 0.01) {
    set(p);
    opts.onProgress(p);
  }
}
