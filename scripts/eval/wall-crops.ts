// A real-video null with the whole crop: two boxes of plain background (the ubfc2 wall above the
// subject's shoulders, the frame's top corners) cut from every ubfc2 video the way the ubfc2
// section cuts the face (fixed box, area-averaged to 36x36, container timestamps). The same codec,
// camera noise and lighting as the faces, no skin, no pulse: the calibration and test captures for
// the evidences that need the crop's pixels (quality/region-coherence.ts). Cached in
// .eval-cache/wall-v1/ (two crop files and the timestamps per subject).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CROP_PIXEL_BYTES, type Packet } from '@vitals/protocol';
import { cachePath, DATA_DIR, decodeFrames, probeVideo, readManifest } from './common.js';
import { cropPackets, cropResize, type Box } from './ubfc2.js';

/** The two wall boxes (640×480 frames; the faces sit between x ≈ 240 and 470, below y ≈ 75). */
export const WALL_BOXES: Box[] = [
  { x: 20, y: 20, w: 120, h: 150 },
  { x: 500, y: 20, w: 120, h: 150 },
];

/** Packets of each wall box of one ubfc2 video (decoded once, then cached). */
export async function wallPackets(id: string, video: string): Promise<Packet[][]> {
  const paths = WALL_BOXES.map((_, k) => cachePath('wall-v1', `${id}.${k}.crops`));
  const tPath = cachePath('wall-v1', `${id}.t.json`);
  if (!existsSync(tPath)) {
    const file = join(DATA_DIR, video);
    const info = probeVideo(file);
    const chunks: Uint8Array[][] = WALL_BOXES.map(() => []);
    const t: number[] = [];
    await decodeFrames(file, info.width, info.height, (rgb, i) => {
      WALL_BOXES.forEach((b, k) => {
        const out = new Uint8Array(CROP_PIXEL_BYTES);
        cropResize(rgb, info.width, b, out);
        chunks[k].push(out);
      });
      t.push(Math.round((info.ptsSec[i] ?? i / 30) * 1e6));
    });
    WALL_BOXES.forEach((_, k) => {
      const all = new Uint8Array(chunks[k].length * CROP_PIXEL_BYTES);
      chunks[k].forEach((c, i) => all.set(c, i * CROP_PIXEL_BYTES));
      writeFileSync(paths[k], all);
    });
    writeFileSync(tPath, JSON.stringify(t));
  }
  const tMicros = JSON.parse(readFileSync(tPath, 'utf8')) as number[];
  return WALL_BOXES.map((box, k) => [...cropPackets({ tMicros, box }, new Uint8Array(readFileSync(paths[k])))]);
}

/** The ubfc2 items with a video (labelled or not: no label is used here). */
export function wallSources(): { id: string; video: string }[] {
  const set = readManifest().sets.find((s) => s.name === 'ubfc2');
  return (set?.items ?? []).filter((i) => i.video).map((i) => ({ id: i.id, video: i.video! }));
}
