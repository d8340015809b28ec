/**
 * The browser capture's tracking path in Node, on a real labelled face (issue 15 §5, no browser):
 * UBFC-rPPG subject 12 converted exactly as the Chromium test's fake camera plays it (30 fps MJPEG),
 * 40 s of its frames pushed one by one into the shared tracker at the analysis rate the tracker
 * worker falls back to under load (2 Hz: a 164 ms detection at 4 Hz passes the 35 % budget), and
 * the engine's heart rate (its internal estimate, published or not) from the packets. It separates the tracker from the fake camera: in
 * Chromium under load the camera itself delivers 23-28 of its 30 fps (docs/capture.md).
 *
 * Also asserted: the crop box does not move with the detection cadence (no line at the analysis
 * rate in the spectrum of the box centre), the hypothesis once held for the 99.9 bpm a Chromium
 * capture locked onto.
 */
import { spawn, execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { estimateOffline } from '@vitals/engine';
import { createHumanDetector, resolveFfmpeg } from '@vitals/media';
import { FaceTracker, type TrackerFrame } from '@vitals/tracker';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const DATA = [path.resolve(REPO, '../shared/data'), path.resolve(REPO, '../../shared/data')].find((d) =>
  existsSync(path.join(d, 'MANIFEST.json')),
);
const SUBJECT = 'subject12';
const SECONDS = 40;
const WIDTH = 640;
const HEIGHT = 480;
/** The tracker worker's analysis rate once detection passes its budget (capture.md). */
const ANALYSIS_HZ = 2;

if (!DATA) console.warn('\n*** SKIPPED: live tracking test: ../shared/data not found ***\n');

function reference(): { video: string; bpm: number } {
  const manifest = JSON.parse(readFileSync(path.join(DATA!, 'MANIFEST.json'), 'utf8')) as {
    sets: { name: string; items: { id: string; video: string; referenceHeartRateBpm?: number }[] }[];
  };
  const item = manifest.sets.find((s) => s.name === 'ubfc2')!.items.find((i) => i.id === SUBJECT)!;
  return { video: path.join(DATA!, item.video), bpm: item.referenceHeartRateBpm! };
}

/** Raw RGB frames of `file` (MJPEG at 30 fps), one buffer per frame, as ffmpeg decodes them. */
async function* rawFrames(ffmpeg: string, file: string): AsyncGenerator<Uint8Array> {
  const size = WIDTH * HEIGHT * 3;
  const p = spawn(ffmpeg, ['-v', 'error', '-f', 'mjpeg', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buf: Buffer = Buffer.alloc(0);
  for await (const chunk of p.stdout as AsyncIterable<Buffer>) {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= size) {
      yield new Uint8Array(buf.subarray(0, size));
      buf = buf.subarray(size);
    }
  }
}

/** Amplitude of the detrended series at `hz` over the median amplitude of 0.7-4 Hz (a line stands far above 1). */
function lineRatio(t: number[], v: number[], hz: number): number {
  const d = v.map((x, i) => {
    let s = 0;
    let k = 0;
    for (let j = Math.max(0, i - 15); j <= Math.min(v.length - 1, i + 15); j++, k++) s += v[j];
    return x - s / k;
  });
  const amp = (f: number): number => {
    let re = 0;
    let im = 0;
    for (let i = 0; i < t.length; i++) {
      re += d[i] * Math.cos(2 * Math.PI * f * t[i]);
      im += d[i] * Math.sin(2 * Math.PI * f * t[i]);
    }
    return Math.hypot(re, im);
  };
  const band: number[] = [];
  for (let f = 0.7; f <= 4; f += 0.01) band.push(amp(f));
  band.sort((a, b) => a - b);
  return amp(hz) / band[band.length >> 1];
}

describe.skipIf(!DATA)('the live tracking path on a real face (UBFC-rPPG subject 12, 30 fps MJPEG)', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'vitals-live-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('measures the reference heart rate within 3 bpm at the browser detection cadence', async () => {
    const ref = reference();
    const { ffmpeg } = resolveFfmpeg();
    const camera = path.join(tmp, 'face.mjpeg');
    // As the Chromium test converts it for the fake camera (browser.test.ts).
    await promisify(execFile)(
      ffmpeg,
      ['-v', 'error', '-y', '-i', ref.video, '-an', '-t', String(SECONDS)].concat([
        '-vf',
        'fps=30',
        '-q:v',
        '2',
        '-f',
        'mjpeg',
        camera,
      ]),
    );
    const detector = await createHumanDetector();
    const tracker = new FaceTracker({ detector, analysisHz: ANALYSIS_HZ, nominalFps: 30 });
    // The smoothed box each frame is cropped with (observed, not changed).
    const boxes: { t: number; cx: number; w: number }[] = [];
    const pz = tracker.packetizer;
    const push = pz.push.bind(pz);
    pz.push = (s) => {
      push(s);
      const c = pz.current;
      if (c) boxes.push({ t: s.frame.tSec, cx: c.box.x + c.box.width / 2, w: c.box.width });
    };
    let index = 0;
    try {
      for await (const data of rawFrames(ffmpeg, camera)) {
        const frame: TrackerFrame = { index, tSec: index / 30, data, width: WIDTH, height: HEIGHT };
        index++;
        await tracker.push(frame);
      }
    } finally {
      tracker.release();
    }
    const m = estimateOffline(await tracker.finish());
    const t = boxes.map((b) => b.t);
    const ratios = {
      cxAtAnalysisRate: lineRatio(
        t,
        boxes.map((b) => b.cx),
        ANALYSIS_HZ,
      ),
      widthAtAnalysisRate: lineRatio(
        t,
        boxes.map((b) => b.w),
        ANALYSIS_HZ,
      ),
      cxAt99_9Bpm: lineRatio(
        t,
        boxes.map((b) => b.cx),
        99.9 / 60,
      ),
    };
    console.log(
      'live tracking',
      JSON.stringify({
        frames: index,
        hr: m.cardiac.heartRate?.value,
        internalHr: m.stats.internalHeartRateBpm,
        quality: m.quality,
        ratios,
      }),
    );
    expect(index).toBe(SECONDS * 30);
    expect(boxes.length).toBeGreaterThan(index * 0.95); // the face is tracked throughout
    for (const r of Object.values(ratios)) expect(r).toBeLessThan(3);
    // The chain's rate whatever the grade: this 40-s window is on the poor/fair edge even through the
    // video pipeline from the original MP4 (score 0.39 there), so the grade tells about the clip, the
    // rate about the tracking.
    const hr = m.stats.internalHeartRateBpm;
    expect(hr).toBeTypeOf('number');
    expect(Math.abs(hr! - ref.bpm)).toBeLessThanOrEqual(3);
  }, 180_000);
});
