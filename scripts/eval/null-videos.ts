// Pulse-less captures a real user produces (issue 17, item 2), made at eval time with ffmpeg from
// the ubfc2 recordings and run through the real video path (`videoToPackets`, as a batch job does):
//   still   a printed photo / frozen frame: one frame of a subject held, with temporal sensor
//           noise and a slow exposure wander;
//   moving  the same still frame panned, zoomed and rotated slowly and irregularly (the tracker
//           must follow it; there is still no pulse);
//   screen  a ubfc2 video replayed on a screen and re-shot: downscaled, gamma/contrast shifted,
//           blurred, a moiré-like pattern, 30 → 24 → 30 fps (duplicated frames), re-encoded at
//           45 kbit/s. Unlike the other two it may still carry the subject's pulse: it measures
//           spoof resistance, not pulse absence (null-videos-eval.ts measures which).
// The videos and their packets live in .eval-cache/null-videos/ (gitignored, never committed;
// VITALS_NULL_VIDEO_CACHE points elsewhere);
// bump NULL_VIDEO_VERSION after changing a recipe or the media pipeline.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeFramesFile, type Packet } from '../../packages/protocol/src/index.js';
import { packetsToFramesFile, videoToPackets } from '../../packages/media/src/index.js';
import {
  cachePath,
  DATA_DIR,
  ffmpegPath,
  FF_REPRODUCIBLE,
  readManifest,
  X264_REPRODUCIBLE,
  type ManifestItem,
} from './common.js';

export interface NullVideoSet {
  set: string;
  description: string;
  items: { id: string; durationSec: number; packets: Packet[] }[];
}

/** n2: clips made reproducibly (common.ts FF_REPRODUCIBLE, X264_REPRODUCIBLE); n1 differed between runs and machines. */
export const NULL_VIDEO_VERSION = 'n2';
/** Where the replay clips start in the source video, s (the first seconds hold the setup). */
export const SCREEN_START_SEC = 3;
/** Replay clip length, s (the shortest ubfc2 video is 46 s long). */
export const SCREEN_SEC = 42;
/**
 * Clips per set. Modest on purpose: `videoToPackets` costs 1–5 min of wall time per clip on the
 * shared 2-core machine, and every clip is made once and cached.
 */
export const STILL_CLIPS = 10;
export const MOVING_CLIPS = 6;
export const SCREEN_CLIPS = 6;

interface Recipe {
  id: string;
  durationSec: number;
  /** ffmpeg arguments from the inputs to the output options, without the output path. */
  args: string[];
}

interface Cached {
  id: string;
  durationSec: number;
  packets: Packet[] | null;
  code?: string;
}

const ff = (args: string[]): void => {
  execFileSync(ffmpegPath(), ['-v', 'error', '-y', ...FF_REPRODUCIBLE, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
};

/** One frame of the subject's video (10 s in) as a PNG, the "photo" the still and moving sets hold. */
function stillFrame(item: ManifestItem): string {
  const png = cachePath('null-videos', NULL_VIDEO_VERSION, 'frames', `${item.id}.png`);
  if (!existsSync(png)) ff(['-ss', '10', '-i', join(DATA_DIR, item.video!), '-frames:v', '1', png]);
  return png;
}

/** x264 as every clip here is encoded (reproducibly: common.ts). */
const X264 = ['-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', ...X264_REPRODUCIBLE];

/** H.264 output like a webcam's: a browser recorder's 1.5 Mbit/s or an ubfc2-like 150 kbit/s. */
const encode = (k: number): string[] => [
  ...X264,
  ...(k % 2 === 0
    ? ['-b:v', '1500k', '-maxrate', '2000k', '-bufsize', '3000k']
    : ['-b:v', '150k', '-maxrate', '200k', '-bufsize', '300k']),
];

/** Temporal sensor noise (a fresh pattern every frame) and a slow, flicker-free exposure wander. */
const sensor = (k: number): string =>
  `noise=alls=${[4, 8, 12][k % 3]}:allf=t:all_seed=${101 + k},` +
  `eq=brightness='0.03*sin(2*PI*t/${13 + k})':eval=frame`;

/** Mostly 30 s; every fourth clip 60 s, long enough for the gate's capture-level test (≥ 45 s). */
const lengthOf = (k: number): number => (k % 4 === 1 ? 60 : 30);

function stillRecipe(item: ManifestItem, k: number): Recipe {
  const durationSec = lengthOf(k);
  const vf = `scale=640:480,format=yuv420p,${sensor(k)}`;
  const args = ['-loop', '1', '-framerate', '30', '-i', stillFrame(item), '-t', String(durationSec), '-vf', vf];
  return { id: item.id, durationSec, args: [...args, ...encode(k)] };
}

/**
 * Pan, zoom and rotation as sums of incommensurate slow sines (0.03–0.4 Hz, below the pulse band),
 * so the path never repeats; a phase per clip. zoompan works on a 2× upscale so its integer pan
 * steps are half-pixels of the output.
 */
function movingRecipe(item: ManifestItem, k: number): Recipe {
  const durationSec = lengthOf(k);
  const p = (k * 0.7).toFixed(2);
  const s = (n: number): string => `(on/30)*${n}`;
  const zoom = `1.15+0.08*sin(2*PI*${s(0.05)}+${p})+0.03*sin(2*PI*${s(0.17)})`;
  const x = `iw/2-(iw/zoom/2)+iw*(0.04*sin(2*PI*${s(0.07)}+${p})+0.02*sin(2*PI*${s(0.29)}+1))`;
  const y = `ih/2-(ih/zoom/2)+ih*(0.03*sin(2*PI*${s(0.11)}+2)+0.015*sin(2*PI*${s(0.37)}+${p}))`;
  const rot = `0.06*sin(2*PI*0.043*t+${p})+0.03*sin(2*PI*0.19*t)`;
  const vf = [
    'scale=1280:960',
    `zoompan=z='${zoom}':x='${x}':y='${y}':d=1:s=640x480:fps=30`,
    `rotate=a='${rot}':fillcolor=black`,
    'format=yuv420p',
    sensor(k),
  ].join(',');
  const args = ['-loop', '1', '-framerate', '30', '-i', stillFrame(item), '-t', String(durationSec), '-vf', vf];
  return { id: item.id, durationSec, args: [...args, ...encode(k)] };
}

/** A moiré-like pattern: two slightly rotated fine gratings, as a camera sees a screen's pixel grid. */
function moirePattern(): string {
  const png = cachePath('null-videos', NULL_VIDEO_VERSION, 'frames', 'moire.png');
  if (!existsSync(png))
    ff([
      '-f',
      'lavfi',
      '-i',
      'color=c=gray:s=640x480',
      '-frames:v',
      '1',
      '-vf',
      "format=gray,geq=lum='200+18*sin(X*1.9+Y*0.21)*sin(X*0.17-Y*1.83)'",
      png,
    ]);
  return png;
}

function screenRecipe(item: ManifestItem): Recipe {
  const graph = [
    `[0:v]trim=start=${SCREEN_START_SEC}:duration=${SCREEN_SEC},setpts=PTS-STARTPTS,fps=24,fps=30,`,
    'scale=320:240,eq=gamma=1.25:contrast=0.85:saturation=0.8,gblur=sigma=0.8,scale=640:480,format=gbrp[v];',
    '[1:v]format=gbrp[m];[v][m]blend=all_mode=multiply,noise=alls=3:allf=t:all_seed=7,format=yuv420p',
  ].join('');
  const args = ['-i', join(DATA_DIR, item.video!), '-loop', '1', '-i', moirePattern(), '-filter_complex', graph];
  const enc = ['-t', String(SCREEN_SEC), ...X264];
  return {
    id: item.id,
    durationSec: SCREEN_SEC,
    args: [...args, ...enc, '-b:v', '45k', '-maxrate', '60k', '-bufsize', '90k'],
  };
}

/**
 * The clips' folder: .eval-cache/null-videos, or VITALS_NULL_VIDEO_CACHE (an absolute path) so
 * another checkout can reuse clips already made (each costs ~1 min of CPU on this machine).
 */
function clipPath(set: string, id: string): string {
  const dir = process.env.VITALS_NULL_VIDEO_CACHE;
  if (!dir) return cachePath('null-videos', NULL_VIDEO_VERSION, set, id);
  mkdirSync(join(dir, NULL_VIDEO_VERSION, set), { recursive: true });
  return join(dir, NULL_VIDEO_VERSION, set, id);
}

async function build(set: string, r: Recipe): Promise<Cached> {
  const base = clipPath(set, r.id);
  const meta = `${base}.json`;
  if (existsSync(meta)) {
    const m = JSON.parse(readFileSync(meta, 'utf8')) as Omit<Cached, 'packets'>;
    if (m.code) return { ...m, packets: null };
    const file = decodeFramesFile(new Uint8Array(readFileSync(`${base}.frames`)));
    if (file.ok) return { ...m, packets: file.packets };
  }
  const video = `${base}.mp4`;
  if (!existsSync(video)) {
    ff([...r.args, `${base}.part.mp4`]); // renamed when complete: an interrupted run leaves no half clip
    renameSync(`${base}.part.mp4`, video);
  }
  const res = await videoToPackets(video);
  const out = { id: r.id, durationSec: r.durationSec, ...(res.ok ? {} : { code: res.code }) };
  if (res.ok) writeFileSync(`${base}.frames`, packetsToFramesFile(res.packets));
  writeFileSync(meta, JSON.stringify(out));
  return { ...out, packets: res.ok ? res.packets : null };
}

/** The ubfc2 items: any subject for the still and moving sets (no labels used), labelled ones for the replay. */
export function nullSources(): { all: ManifestItem[]; labelled: ManifestItem[] } {
  const items = (readManifest().sets.find((s) => s.name === 'ubfc2')?.items ?? []).filter((i) => i.video);
  return { all: items, labelled: items.filter((i) => i.referenceHeartRateBpm !== undefined) };
}

/** Which recipes produced no packets (the video path refused the clip), per set: reported by the eval. */
export const rejectedNulls = new Map<string, { id: string; code: string }[]>();

export async function nullVideoSets(): Promise<NullVideoSet[]> {
  const { all, labelled } = nullSources();
  const still = all.slice(0, STILL_CLIPS);
  const moving = all.filter((_, k) => k % 2 === 1).slice(0, MOVING_CLIPS);
  const screen = labelled.slice(0, SCREEN_CLIPS);
  const specs: { set: string; description: string; recipes: Recipe[] }[] = [
    {
      set: 'still',
      description:
        'Printed photo / frozen frame: one frame of a ubfc2 subject (the first ten of the manifest, labelled or not) held for 30 s (every fourth 60 s), temporal sensor noise (ffmpeg noise 4/8/12), slow exposure wander (±3 %), H.264 at 1.5 Mbit/s or 150 kbit/s. No pulse.',
      recipes: still.map((it, k) => stillRecipe(it, k)),
    },
    {
      set: 'moving',
      description:
        'A face that moves without a pulse: the still frame of every other subject of the manifest (six) panned (±4 % of the frame), zoomed (1.04–1.26×) and rotated (±5°) along slow irregular paths (sums of 0.03–0.4 Hz sines), plus sensor noise and exposure wander as in the still set; 30 s (every fourth 60 s). No pulse.',
      recipes: moving.map((it, k) => movingRecipe(it, k)),
    },
    {
      set: 'screen',
      description: `A screen replaying a face video, re-shot: ${SCREEN_SEC} s of each of the first six labelled ubfc2 videos (from ${SCREEN_START_SEC} s) downscaled to 320×240, gamma 1.25, contrast 0.85, blurred, a moiré-like grating, 30 → 24 → 30 fps (duplicated frames), light sensor noise, H.264 at 45 kbit/s. The subject's pulse may survive the replay: a spoof, not a pulse-less capture.`,
      recipes: screen.map((it) => screenRecipe(it)),
    },
  ];
  const sets: NullVideoSet[] = [];
  for (const spec of specs) {
    const items: NullVideoSet['items'] = [];
    const rejected: { id: string; code: string }[] = [];
    for (const r of spec.recipes) {
      const c = await build(spec.set, r);
      if (c.packets) items.push({ id: c.id, durationSec: c.durationSec, packets: c.packets });
      else rejected.push({ id: c.id, code: c.code ?? 'error' });
    }
    rejectedNulls.set(spec.set, rejected);
    sets.push({ set: spec.set, description: spec.description, items });
  }
  return sets;
}
