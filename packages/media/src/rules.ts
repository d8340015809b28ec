/**
 * The spec's video rejections (Video rejections; Limits: video thresholds), checked in the order
 * of CLARIFICATIONS 22: unsupported media (probe.ts), too short, frame rate, face presence, face
 * size. Bitrate is never a rejection (CLARIFICATIONS 25).
 */
import {
  VIDEO_MAX_DURATION_SEC,
  VIDEO_MIN_DURATION_SEC,
  VIDEO_MIN_FACE_PRESENCE,
  VIDEO_MIN_FACE_WIDTH_PX,
  VIDEO_MIN_FPS,
  type Packet,
  type VideoRejectionCode,
} from '@vitals/protocol';

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
  /** Encoded video bitrate from the container, bits per second; null when it does not say. */
  bitRateBps: number | null;
}

export type VideoRejection = {
  ok: false;
  code: VideoRejectionCode;
  message: string;
  stats?: Partial<VideoStats>;
};
export type VideoResult = { ok: true; packets: Packet[]; stats: VideoStats } | VideoRejection;

export const reject = (code: VideoRejectionCode, message: string, stats?: Partial<VideoStats>): VideoRejection => ({
  ok: false,
  code,
  message,
  stats,
});

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = Float64Array.from(values).sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** "1 h 12 min", "61 min", "59.5 s": a video's length as a person reads it. */
function lengthText(sec: number): string {
  if (sec < 60) return `${sec.toFixed(1)} s`;
  const min = Math.floor(sec / 60);
  return min < 120 ? `${min} min` : `${Math.floor(min / 60)} h ${min % 60} min`;
}

/**
 * Longer than `maxSec` (default VIDEO_MAX_DURATION_SEC): `unsupported_media`, the spec's code for
 * a video the service does not take, before anything is decoded (the container's duration) or as
 * soon as the decoded frames pass it (a container that does not say, or says less).
 */
export function lengthRejection(
  durationSec: number,
  stats: Partial<VideoStats>,
  maxSec: number = VIDEO_MAX_DURATION_SEC,
): VideoRejection | null {
  if (!(durationSec > maxSec)) return null;
  const said = Number.isFinite(durationSec) ? `lasts ${lengthText(durationSec)}, longer than` : 'is longer than';
  return reject(
    'unsupported_media',
    `The video ${said} the ${lengthText(maxSec)} a video may last: cut out the part to measure and upload that.`,
    stats,
  );
}

/** Too short, then too slow; null when both pass. */
export function timingRejection(durationSec: number, fps: number, stats: Partial<VideoStats>): VideoRejection | null {
  if (durationSec < VIDEO_MIN_DURATION_SEC)
    return reject(
      'too_short',
      `The video lasts ${durationSec.toFixed(1)} s; at least ${VIDEO_MIN_DURATION_SEC} s is needed.`,
      stats,
    );
  if (fps < VIDEO_MIN_FPS)
    return reject(
      'insufficient_frame_rate',
      `The video runs at ${fps.toFixed(1)} fps; at least ${VIDEO_MIN_FPS} fps is needed.`,
      stats,
    );
  return null;
}

/**
 * What no camera records for this use, refused from the probe before anything is decoded (issue 19,
 * docs/decisions.md "Batch and uploads"): 4096 pixels on a side (DCI 4K), 12.6 megapixels a frame
 * (4096 x 3072, a 4:3 sensor's full readout) and 500 megapixels a second (UHD at 60 fps; 1080p at
 * 240 fps). Frames are analysed at 1280 pixels at most, so nothing larger helps a measurement, and
 * decoding cost grows with every pixel: an 8192 x 8192 clip took 31.5 s and 1.1 GB to decode.
 */
export const VIDEO_MAX_SIDE_PX = 4096;
export const VIDEO_MAX_FRAME_PIXELS = 4096 * 3072;
export const VIDEO_MAX_PIXEL_RATE = 500_000_000;

/** Too large a frame or too many pixels a second (`unsupported_media`); null when within the caps. */
export function sizeRejection(
  width: number,
  height: number,
  fps: number,
  stats: Partial<VideoStats>,
): VideoRejection | null {
  const mp = (n: number): string => (n / 1e6).toFixed(1);
  if (Math.max(width, height) > VIDEO_MAX_SIDE_PX || width * height > VIDEO_MAX_FRAME_PIXELS)
    return reject(
      'unsupported_media',
      `The video is ${width}x${height} (${mp(width * height)} megapixels); at most ${VIDEO_MAX_SIDE_PX} pixels a side and ${mp(VIDEO_MAX_FRAME_PIXELS)} megapixels a frame are accepted.`,
      stats,
    );
  const rate = width * height * fps;
  if (Number.isFinite(rate) && rate > VIDEO_MAX_PIXEL_RATE)
    return reject(
      'unsupported_media',
      `The video is ${width}x${height} at ${fps.toFixed(1)} fps (${mp(rate)} megapixels a second); at most ${mp(VIDEO_MAX_PIXEL_RATE)} megapixels a second are accepted.`,
      stats,
    );
  return null;
}

/** Face presence, then face size; null when both pass. */
export function faceRejection(stats: VideoStats): VideoRejection | null {
  if (stats.facePresence < VIDEO_MIN_FACE_PRESENCE) {
    const found = (stats.facePresence * 100).toFixed(0);
    return reject(
      'face_not_detected',
      `A face was found in ${found} % of frames; at least ${VIDEO_MIN_FACE_PRESENCE * 100} % is needed.`,
      stats,
    );
  }
  if (stats.medianFaceWidthPx < VIDEO_MIN_FACE_WIDTH_PX) {
    const width = stats.medianFaceWidthPx.toFixed(0);
    return reject(
      'face_too_small',
      `The face is ${width} px wide (median); at least ${VIDEO_MIN_FACE_WIDTH_PX} px is needed.`,
      stats,
    );
  }
  return null;
}
