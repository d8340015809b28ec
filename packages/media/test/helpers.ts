/**
 * Test clips generated with ffmpeg at test time into a temp dir (never committed), and a fake
 * face detector that "finds" skin-coloured boxes drawn into those clips.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DetectedFace, FaceDetector, RgbImage } from '../src/index.js';
import { ffmpegCached } from '../../../scripts/testing/ffmpeg-cached.js';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** ../shared/data beside the checkout (a git worktree sits one level deeper: ../../shared/data). */
export const SHARED_DATA =
  [path.resolve(REPO, '../shared/data'), path.resolve(REPO, '../../shared/data')].find((d) => existsSync(d)) ??
  path.resolve(REPO, '../shared/data');
export const UBFC_SAMPLE = path.join(SHARED_DATA, 'ubfc2/subject3/vid.mp4');
export const HAS_UBFC = existsSync(UBFC_SAMPLE);

/** Skin tone of the drawn "faces" (RGB) and the ffmpeg colour that draws it. */
export const SKIN: [number, number, number] = [224, 172, 140];
const SKIN_HEX = '0xE0AC8C';

export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'vitals-media-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ClipSpec {
  seconds: number;
  fps: number;
  width?: number;
  height?: number;
  /** Drawn skin boxes [x, y, w, h]; none gives a face-free clip. */
  faces?: [number, number, number, number][];
  /** Only draw the faces during this share of the clip, from the start. */
  faceShare?: number;
  /** Background: a flat grey, or ffmpeg's moving test pattern. */
  background?: 'grey' | 'testsrc';
  /** Output codec args; default H.264 in MP4. */
  codecArgs?: string[];
  /** Extra output args (e.g. a setpts filter is given through `filter`). */
  filter?: string;
}

export async function makeClip(file: string, spec: ClipSpec): Promise<string> {
  const w = spec.width ?? 320;
  const h = spec.height ?? 240;
  const src =
    spec.background === 'testsrc'
      ? `testsrc=size=${w}x${h}:rate=${spec.fps}:duration=${spec.seconds}`
      : `color=c=0x303030:size=${w}x${h}:rate=${spec.fps}:duration=${spec.seconds}`;
  const until = spec.faceShare !== undefined ? `:enable='lt(t,${(spec.seconds * spec.faceShare).toFixed(3)})'` : '';
  // A slow drift of +-2 px so the clip is not a still frame.
  const draws = (spec.faces ?? []).map(
    ([x, y, bw, bh]) => `drawbox=x=${x}+2*sin(t):y=${y}:w=${bw}:h=${bh}:color=${SKIN_HEX}:t=fill${until}`,
  );
  const filters = [...draws, ...(spec.filter ? [spec.filter] : [])];
  const args = ['-v', 'error', '-f', 'lavfi', '-i', src];
  if (filters.length) args.push('-vf', filters.join(','));
  args.push(...(spec.codecArgs ?? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']));
  // A copy of the cached encode: the test owns `file` (some truncate or rewrite theirs).
  copyFileSync(await ffmpegCached(args, path.extname(file)), file);
  return file;
}

/** Cuts `seconds` of a real recording, optionally scaled, re-encoded as intra-only H.264. */
export async function cutReal(src: string, file: string, seconds: number, scale?: string): Promise<string> {
  const args = ['-v', 'error', '-i', src, '-t', String(seconds), '-an'];
  if (scale) args.push('-vf', `scale=${scale}`);
  args.push('-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '12', '-g', '1', '-pix_fmt', 'yuv420p');
  copyFileSync(await ffmpegCached(args, path.extname(file)), file);
  return file;
}

/** Bounding boxes of skin-coloured pixels, one per horizontal run of columns. */
export function findSkinBoxes(img: RgbImage): DetectedFace[] {
  const cols = new Int32Array(img.width).fill(-1);
  const top = new Int32Array(img.width).fill(img.height);
  const bottom = new Int32Array(img.width).fill(-1);
  for (let y = 0; y < img.height; y++) {
    for (let x = 0; x < img.width; x++) {
      const i = (y * img.width + x) * 3;
      const d =
        Math.abs(img.data[i] - SKIN[0]) + Math.abs(img.data[i + 1] - SKIN[1]) + Math.abs(img.data[i + 2] - SKIN[2]);
      if (d < 40) {
        cols[x] = 1;
        if (y < top[x]) top[x] = y;
        if (y > bottom[x]) bottom[x] = y;
      }
    }
  }
  const faces: DetectedFace[] = [];
  let start = -1;
  for (let x = 0; x <= img.width; x++) {
    const on = x < img.width && cols[x] === 1;
    if (on && start < 0) start = x;
    if (!on && start >= 0) {
      let y0 = img.height;
      let y1 = -1;
      for (let c = start; c < x; c++) {
        y0 = Math.min(y0, top[c]);
        y1 = Math.max(y1, bottom[c]);
      }
      if (x - start >= 4) faces.push({ box: { x: start, y: y0, width: x - start, height: y1 - y0 + 1 }, score: 1 });
      start = -1;
    }
  }
  return faces;
}

export const skinDetector: FaceDetector = {
  name: 'test-skin-box',
  detect: async (img) => findSkinBoxes(img),
};
