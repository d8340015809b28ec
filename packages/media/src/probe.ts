/**
 * ffprobe of an uploaded video and the container/codec rule (spec: Video rejections,
 * `unsupported_media`): MP4/MOV carrying H.264 or HEVC, WebM carrying VP8, VP9 or AV1.
 * Anything else, or bytes ffprobe cannot read as a video, is unsupported.
 */
import { execFile } from 'node:child_process';
import { FFMPEG_BOUNDS } from './decode.js';

export interface ProbeInfo {
  container: 'mp4' | 'mov' | 'webm';
  codec: string;
  /** Displayed size (after the rotation ffmpeg applies by default). */
  width: number;
  height: number;
  /** Seconds, from the container; NaN when unknown. */
  durationSec: number;
  /** Average frame rate from the container; NaN when unknown. */
  fps: number;
  /** Frame count from the container; NaN when unknown. */
  frameCount: number;
  bitRate: number;
  /** The stream's pixel format and colour tags as ffprobe names them (yuv.ts decides the decode format from them). */
  pixFmt?: string;
  colorRange?: string;
  colorSpace?: string;
}

export type ProbeResult = { ok: true; info: ProbeInfo } | { ok: false; message: string };

const MP4_CODECS = new Set(['h264', 'hevc']);
const WEBM_CODECS = new Set(['vp8', 'vp9', 'av1']);

interface RawStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  duration?: string;
  bit_rate?: string;
  pix_fmt?: string;
  color_range?: string;
  color_space?: string;
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
  disposition?: { attached_pic?: number };
}
interface RawProbe {
  streams?: RawStream[];
  format?: { format_name?: string; duration?: string; bit_rate?: string; tags?: Record<string, string> };
}

function rate(s: string | undefined): number {
  if (!s) return NaN;
  const [n, d] = s.split('/').map(Number);
  return d ? n / d : n;
}

function runProbe(ffprobe: string, file: string): Promise<RawProbe | null> {
  // The container's figures are read even when the bounded allocation refuses to decode a frame, so
  // an oversize video is still described (and then refused by size, rules.ts) rather than unreadable.
  const args = ['-v', 'error', ...FFMPEG_BOUNDS, '-print_format', 'json', '-show_format', '-show_streams', file];
  return new Promise((resolve) => {
    execFile(ffprobe, args, { timeout: 60_000, maxBuffer: 8 << 20 }, (err, stdout) => {
      if (err) return resolve(null);
      try {
        resolve(JSON.parse(stdout) as RawProbe);
      } catch {
        resolve(null);
      }
    });
  });
}

export async function probeVideo(ffprobe: string, file: string): Promise<ProbeResult> {
  const raw = await runProbe(ffprobe, file);
  if (!raw?.format) return { ok: false, message: 'The file is not a readable video.' };
  const stream = raw.streams?.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  if (!stream || !stream.width || !stream.height) return { ok: false, message: 'The file has no video stream.' };
  const formatName = raw.format.format_name ?? '';
  const codec = stream.codec_name ?? 'unknown';
  let container: ProbeInfo['container'];
  if (formatName.includes('mp4') || formatName.includes('mov')) {
    container = raw.format.tags?.major_brand?.trim() === 'qt' ? 'mov' : 'mp4';
    if (!MP4_CODECS.has(codec))
      return { ok: false, message: `Codec ${codec} in ${container} is not supported (H.264 or HEVC).` };
  } else if (formatName.includes('webm')) {
    container = 'webm';
    if (!WEBM_CODECS.has(codec)) return { ok: false, message: `Codec ${codec} is not a WebM codec (VP8, VP9 or AV1).` };
  } else {
    return {
      ok: false,
      message: `Container ${formatName || 'unknown'} is not supported (MP4, MOV or WebM).`,
    };
  }
  const rotation = Number(
    stream.tags?.rotate ?? stream.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? 0,
  );
  const quarter = Math.abs(Math.round(rotation / 90)) % 2 === 1;
  const durationSec = Number(raw.format.duration ?? stream.duration ?? NaN);
  const avg = rate(stream.avg_frame_rate);
  return {
    ok: true,
    info: {
      container,
      codec,
      width: quarter ? stream.height : stream.width,
      height: quarter ? stream.width : stream.height,
      durationSec,
      fps: Number.isFinite(avg) && avg > 0 ? avg : NaN,
      frameCount: Number(stream.nb_frames ?? NaN),
      bitRate: Number(stream.bit_rate ?? raw.format.bit_rate ?? NaN),
      pixFmt: stream.pix_fmt,
      colorRange: stream.color_range,
      colorSpace: stream.color_space,
    },
  };
}
