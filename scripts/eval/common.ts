// Shared helpers for the accuracy evaluation (Node only): data location, cache, ffmpeg decoding,
// metrics and markdown tables.
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DATA_DIR = resolve(REPO_ROOT, process.env.VITALS_DATA_DIR_SHARED ?? '../shared/data');
export const CACHE_DIR = join(REPO_ROOT, '.eval-cache');

export function cachePath(...parts: string[]): string {
  const p = join(CACHE_DIR, ...parts);
  mkdirSync(dirname(p), { recursive: true });
  return p;
}

export interface ManifestItem {
  id: string;
  video?: string;
  groundTruth?: string | null;
  referenceHeartRateBpm?: number;
  note?: string;
}
export interface ManifestSet {
  name: string;
  path: string;
  items?: ManifestItem[];
  index?: string;
}

export function readManifest(): { sets: ManifestSet[] } {
  return JSON.parse(readFileSync(join(DATA_DIR, 'MANIFEST.json'), 'utf8'));
}

export function dataAvailable(): boolean {
  return existsSync(join(DATA_DIR, 'MANIFEST.json'));
}

const require = createRequire(import.meta.url);
export function ffmpegPath(): string {
  return (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
}
/**
 * Options that make a clip the evaluation builds with ffmpeg the same bytes on any x86-64 machine
 * with the bundled ffmpeg, run after run. `-cpuflags 0` (global, first): ffmpeg's own libraries run
 * their C code, never a SIMD path chosen by the CPU (swscale's SIMD rounds differently from its C
 * path and between instruction sets, so the same recipe made other pixels on another machine).
 * For x264, `X264_REPRODUCIBLE`: one thread (its frame threads under rate control give different
 * bytes from one run to the next on the same machine); its own assembly is bit-exact by design.
 */
export const FF_REPRODUCIBLE: readonly string[] = ['-cpuflags', '0'];
export const X264_REPRODUCIBLE: readonly string[] = ['-threads', '1'];

export function ffprobePath(): string {
  return (require('@ffprobe-installer/ffprobe') as { path: string }).path;
}

export interface VideoInfo {
  width: number;
  height: number;
  /** Presentation time of every frame, seconds, in display order. */
  ptsSec: number[];
}

export function probeVideo(file: string): VideoInfo {
  const out = execFileSync(
    ffprobePath(),
    [
      '-v',
      'error',
      '-select_streams',
      'v:0',
      '-show_entries',
      'stream=width,height',
      '-show_entries',
      'packet=pts_time',
      '-of',
      'json',
      file,
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  ).toString();
  const j = JSON.parse(out) as { streams: { width: number; height: number }[]; packets: { pts_time?: string }[] };
  const pts = j.packets
    .map((p) => Number(p.pts_time))
    .filter((v) => Number.isFinite(v))
    .sort((a, b) => a - b);
  return { width: j.streams[0].width, height: j.streams[0].height, ptsSec: pts };
}

/** Streams rgb24 frames of `file` to `onFrame` one at a time (never the whole video in memory). */
export async function decodeFrames(
  file: string,
  width: number,
  height: number,
  onFrame: (rgb: Uint8Array, index: number) => void,
): Promise<number> {
  const frameBytes = width * height * 3;
  const child = spawn(
    ffmpegPath(),
    ['-v', 'error', '-i', file, '-vsync', 'passthrough', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const frame = new Uint8Array(frameBytes);
  let filled = 0;
  let index = 0;
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    let off = 0;
    while (off < chunk.length) {
      const take = Math.min(frameBytes - filled, chunk.length - off);
      frame.set(chunk.subarray(off, off + take), filled);
      filled += take;
      off += take;
      if (filled === frameBytes) {
        onFrame(frame, index++);
        filled = 0;
      }
    }
  }
  await new Promise<void>((res) => (child.exitCode !== null ? res() : child.on('close', () => res())));
  return index;
}

export interface ErrorStats {
  n: number;
  mae: number;
  rmse: number;
  r: number;
}

export function errorStats(est: number[], ref: number[]): ErrorStats {
  const n = est.length;
  if (n === 0) return { n: 0, mae: NaN, rmse: NaN, r: NaN };
  let ae = 0;
  let se = 0;
  for (let i = 0; i < n; i++) {
    ae += Math.abs(est[i] - ref[i]);
    se += (est[i] - ref[i]) ** 2;
  }
  const me = est.reduce((a, b) => a + b, 0) / n;
  const mr = ref.reduce((a, b) => a + b, 0) / n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (est[i] - me) * (ref[i] - mr);
    saa += (est[i] - me) ** 2;
    sbb += (ref[i] - mr) ** 2;
  }
  return { n, mae: ae / n, rmse: Math.sqrt(se / n), r: saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : NaN };
}

export const fmt = (v: number | null | undefined, d = 1): string =>
  v === null || v === undefined || !Number.isFinite(v) ? '–' : v.toFixed(d);

export function table(head: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}

export function statsRow(label: string, s: ErrorStats): (string | number)[] {
  return [label, s.n, fmt(s.mae, 2), fmt(s.rmse, 2), fmt(s.r, 3)];
}
