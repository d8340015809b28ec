/**
 * The evaluation hook `cropBox` (scripts/eval/box-sensitivity.ts): the face crop is cut from the
 * mapped box, while face width and motion keep the smoothed one; without the hook the crop is cut from
 * the smoothed box itself. The frame is a horizontal gradient, so a box moved sideways gives other
 * pixels, and the detector a scripted still face.
 */
import { describe, expect, it } from 'vitest';
import { cropResizeRgb, type Box, type Packet } from '@vitals/protocol';
import { FaceTracker, type FaceDetector } from '../src/index.js';

const W = 320;
const H = 240;
const FACE: Box = { x: 100, y: 60, width: 100, height: 120 };

function gradient(): Uint8Array {
  const data = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const i = 3 * (y * W + x);
      data[i] = x % 256;
      data[i + 1] = y % 256;
      data[i + 2] = (x + y) % 256;
    }
  return data;
}

const still: FaceDetector = {
  name: 'still',
  detect: () => Promise.resolve([{ box: { ...FACE }, score: 1 }]),
};

async function crops(cropBox?: (box: Box) => Box): Promise<{ packets: Packet[]; seen: Box[] }> {
  const seen: Box[] = [];
  const tracker = new FaceTracker({
    detector: still,
    cropBox: cropBox
      ? (box) => {
          seen.push(box);
          return cropBox(box);
        }
      : undefined,
  });
  const data = gradient();
  for (let i = 0; i < 10; i++) await tracker.push({ index: i, tSec: i / 30, data, width: W, height: H });
  return { packets: await tracker.finish(), seen };
}

const pixelsOf = (packets: Packet[]): Uint8Array[] => packets.flatMap((p) => (p.type === 1 ? [p.pixels] : []));

describe('cropBox (evaluation hook)', () => {
  it('cuts each face crop from the mapped box and leaves the rest to the smoothed box', async () => {
    const shift = (b: Box): Box => ({ ...b, x: b.x + 7 });
    const plain = await crops();
    const moved = await crops(shift);
    const a = pixelsOf(plain.packets);
    const b = pixelsOf(moved.packets);
    expect(b).toHaveLength(a.length);
    expect(moved.seen).toHaveLength(a.length);
    for (let i = 0; i < b.length; i++) {
      // The still face gives the detector's box after smoothing: the hook got that box.
      expect(moved.seen[i].x).toBeCloseTo(FACE.x, 6);
      expect(b[i]).toEqual(cropResizeRgb(gradient(), W, H, shift(moved.seen[i])));
      expect(a[i]).toEqual(cropResizeRgb(gradient(), W, H, moved.seen[i]));
      expect(b[i]).not.toEqual(a[i]);
    }
    // Face width and motion come from the smoothed box; the quality packet's brightness is the crop's.
    const quality = (p: Packet[]) =>
      p.flatMap((x) => (x.type === 2 ? [{ t: x.tMicros, w: x.faceWidthRatio, m: x.motionScore }] : []));
    expect(quality(moved.packets).length).toBeGreaterThan(0);
    expect(quality(moved.packets)).toEqual(quality(plain.packets));
  });
});
