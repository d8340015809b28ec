/**
 * Issue 18: fewer analyses while the face is steady. The tracker analyses at `steady.analysisHz`
 * with a full detection every `steady.redetectSec` while the detected box stays within
 * STEADY_SHIFT face widths of the previous one, and returns to `analysisHz` / `redetectSec` as soon
 * as it moves; without `steady` nothing changes (the browser capture's default). The detector here
 * is a scripted one (a face whose position is a function of time): the port tests may fill.
 */
import { describe, expect, it } from 'vitest';
import {
  FaceTracker,
  STEADY_SHIFT,
  STEADY_VIDEO,
  type DetectedFace,
  type FaceDetector,
  type TrackerFrame,
} from '../src/index.js';

interface Call {
  tSec: number;
  fresh: boolean;
}

/** A face 100 px wide at x(t); records every call. */
function scripted(x: (t: number) => number): { detector: FaceDetector; calls: Call[] } {
  const calls: Call[] = [];
  const detector: FaceDetector = {
    name: 'scripted',
    detect(image, opts) {
      const tSec = (image as TrackerFrame).tSec;
      calls.push({ tSec, fresh: opts.fresh });
      const face: DetectedFace = { box: { x: x(tSec), y: 100, width: 100, height: 120 }, score: 1 };
      return Promise.resolve([face]);
    },
  };
  return { detector, calls };
}

async function run(detector: FaceDetector, steady: boolean, seconds = 12): Promise<number> {
  const tracker = new FaceTracker({ detector, steady: steady ? STEADY_VIDEO : undefined });
  const data = new Uint8Array(320 * 240 * 3);
  for (let i = 0; i < seconds * 30; i++) await tracker.push({ index: i, tSec: i / 30, data, width: 320, height: 240 });
  const packets = await tracker.finish();
  return packets.filter((p) => p.type === 1).length;
}

const gaps = (calls: Call[]): number[] => calls.slice(1).map((c, i) => +(c.tSec - calls[i].tSec).toFixed(3));
const freshGaps = (calls: Call[]): number[] => gaps(calls.filter((c) => c.fresh));

describe('steady analysis rates', () => {
  it('analyses a still face at 2 Hz with a full detection every 4 s, every frame still cropped', async () => {
    const { detector, calls } = scripted(() => 100);
    expect(await run(detector, true)).toBe(360);
    // The first gap is at 4 Hz (no previous box to compare with), then 2 Hz.
    expect(
      gaps(calls)
        .slice(1)
        .every((g) => Math.abs(g - 0.5) < 0.02),
    ).toBe(true);
    expect(freshGaps(calls).every((g) => g >= 4 - 0.02 && g <= 4.5)).toBe(true);
    expect(calls.length).toBeLessThanOrEqual(26);
  });

  it('goes back to 4 Hz and 2 s while the face moves more than STEADY_SHIFT widths between analyses', async () => {
    // 0.6 face widths per second: 0.15 widths per 0.25 s, far over the steady bound.
    const { detector, calls } = scripted((t) => 100 + 60 * t);
    await run(detector, true);
    expect(gaps(calls).every((g) => Math.abs(g - 0.25) < 0.02)).toBe(true);
    expect(freshGaps(calls).every((g) => g >= 2 - 0.02 && g <= 2.3)).toBe(true);
  });

  it('speeds up at the first analysis that sees the face move', async () => {
    // Still for 6 s, then moving at 0.6 widths per second.
    const { detector, calls } = scripted((t) => (t < 6 ? 100 : 100 + 60 * (t - 6)));
    await run(detector, true);
    const after = calls.filter((c) => c.tSec > 6.6);
    expect(after.length).toBeGreaterThan(10);
    expect(gaps(after).every((g) => Math.abs(g - 0.25) < 0.02)).toBe(true);
    expect(STEADY_SHIFT).toBeLessThan(0.15);
  });

  it('changes nothing without the option (4 Hz, full detection every 2 s)', async () => {
    const { detector, calls } = scripted(() => 100);
    await run(detector, false);
    expect(gaps(calls).every((g) => Math.abs(g - 0.25) < 0.02)).toBe(true);
    expect(freshGaps(calls).every((g) => g >= 2 - 0.02 && g <= 2.3)).toBe(true);
    expect(calls.filter((c) => c.fresh).length).toBe(6);
  });
});
