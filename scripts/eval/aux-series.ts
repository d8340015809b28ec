// The aux analyses of a capture as a series (packages/media/src/aux-analyzer.ts `AuxSeries`: the
// first image of every AUX_GROUP a full detection, the others FaceMesh from its detector box)
// against a full detection of every image, on the aux JPEGs our video path makes of each UBFC-rPPG
// video (type-4 crops of the tracker's face, 2 Hz). Per video: the share of images analysed from a
// box, CPU per image of each way, and what the stored measurement averages (the mean of the eight
// emotion probabilities, its dominant class, the mean gaze) compared between the two. The yardstick
// is how far the same figures move when every image is shifted by one pixel and analysed by full
// detections: a difference that small is not one the models can tell from their own noise.
//
// Run: npx tsx --conditions source scripts/eval/aux-series.ts [subject3 subject5 ...]
//      (every ubfc2 video by default; about 15 s a video, the aux JPEGs cached in .eval-cache/aux)
// Not part of `npm run eval`: it measures the aux models' shortcut, not the engine.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import jpeg from 'jpeg-js';
import {
  AUX_GROUP,
  createAuxAnalyzer,
  createHumanDetector,
  videoToPackets,
  type AuxAnalysis,
  type AuxAnalyzer,
} from '../../packages/media/src/index.js';
import { DATA_DIR, fmt, REPO_ROOT, table } from './common.js';

const CACHE = join(REPO_ROOT, '.eval-cache', 'aux');

/** The video's aux JPEGs as the video path makes them (cached: the tracker's output does not change here). */
async function auxImages(subject: string, detector: Awaited<ReturnType<typeof createHumanDetector>>) {
  const dir = join(CACHE, subject);
  const done = join(dir, 'done');
  if (!existsSync(done)) {
    mkdirSync(dir, { recursive: true });
    let i = 0;
    const r = await videoToPackets(join(DATA_DIR, 'ubfc2', subject, 'vid.mp4'), {
      detector,
      aux: true,
      keepCrops: false,
      onAux: (j) => writeFileSync(join(dir, `${String(i++).padStart(5, '0')}.jpg`), j),
    });
    if (!r.ok) throw new Error(`${subject}: ${r.code}`);
    writeFileSync(done, String(i));
  }
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jpg'))
    .sort()
    .map((f) => new Uint8Array(readFileSync(join(dir, f))));
}

/** The same JPEG with its pixels moved one to the right (the edge column repeated), re-encoded. */
function shiftedOnePixel(bytes: Uint8Array): Uint8Array {
  const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
  const { width: w, height: h, data } = img;
  const out = new Uint8Array(data.length);
  for (let y = 0; y < h; y++) {
    const row = y * w * 4;
    out.set(data.subarray(row, row + 4), row);
    out.set(data.subarray(row, row + (w - 1) * 4), row + 4);
  }
  return new Uint8Array(jpeg.encode({ width: w, height: h, data: out }, 90).data);
}

interface Aggregate {
  emotion: number[];
  yaw: number;
  pitch: number;
}

function aggregate(list: AuxAnalysis[]): Aggregate {
  const emotion = new Array<number>(8).fill(0);
  let ne = 0;
  let yaw = 0;
  let pitch = 0;
  let ng = 0;
  for (const a of list) {
    if (a.emotion) {
      a.emotion.forEach((v, i) => (emotion[i] += v));
      ne++;
    }
    if (a.gaze) {
      yaw += a.gaze.yaw;
      pitch += a.gaze.pitch;
      ng++;
    }
  }
  return {
    emotion: emotion.map((v) => v / Math.max(1, ne)),
    yaw: yaw / Math.max(1, ng),
    pitch: pitch / Math.max(1, ng),
  };
}

const DEG = 180 / Math.PI;
const dominant = (e: number[]): number => e.indexOf(Math.max(...e));

function compare(a: Aggregate, ref: Aggregate) {
  return {
    l1: a.emotion.reduce((s, v, i) => s + Math.abs(v - ref.emotion[i]), 0),
    sameDominant: dominant(a.emotion) === dominant(ref.emotion),
    gazeDeg: Math.hypot(a.yaw - ref.yaw, a.pitch - ref.pitch) * DEG,
  };
}

/** Every image through `analyze` (or one series), with the CPU it took (ms per image). */
async function timed(images: Uint8Array[], analyze: (b: Uint8Array) => Promise<AuxAnalysis>) {
  const c0 = process.cpuUsage();
  const out: AuxAnalysis[] = [];
  for (const img of images) out.push(await analyze(img));
  const c = process.cpuUsage(c0);
  return { out, msPerImage: (c.user + c.system) / 1000 / images.length };
}

async function main(): Promise<void> {
  const subjects = process.argv.slice(2).length
    ? process.argv.slice(2)
    : readdirSync(join(DATA_DIR, 'ubfc2'))
        .filter((d) => existsSync(join(DATA_DIR, 'ubfc2', d, 'vid.mp4')))
        .sort((a, b) => Number(a.replace(/\D/g, '')) - Number(b.replace(/\D/g, '')));
  const detector = await createHumanDetector();
  const analyzer: AuxAnalyzer = await createAuxAnalyzer();
  if (!analyzer.series) throw new Error('the aux analyzer has no series mode');
  const rows: (string | number)[][] = [];
  const totals = { images: 0, fromBox: 0, full: 0, series: 0 };
  let worst = { l1: 0, gaze: 0, floorL1: 0, floorGaze: 0 };
  let dominantChanged = 0;
  let floorDominantChanged = 0;
  for (const s of subjects) {
    const images = await auxImages(s, detector);
    // Warm both ways once (the first calls compile and allocate).
    await analyzer.analyze(images[0]);
    const full = await timed(images, (b) => analyzer.analyze(b));
    const series = analyzer.series();
    const seq = await timed(images, (b) => series.analyze(b));
    const shifted = images.map(shiftedOnePixel);
    const floor = await timed(shifted, (b) => analyzer.analyze(b));
    // Images whose series analysis is not the full detection's: analysed from the box.
    const fromBox = seq.out.filter((a, i) => JSON.stringify(a) !== JSON.stringify(full.out[i])).length;
    const ref = aggregate(full.out);
    const d = compare(aggregate(seq.out), ref);
    const f = compare(aggregate(floor.out), ref);
    totals.images += images.length;
    totals.fromBox += fromBox;
    totals.full += full.msPerImage * images.length;
    totals.series += seq.msPerImage * images.length;
    worst = {
      l1: Math.max(worst.l1, d.l1),
      gaze: Math.max(worst.gaze, d.gazeDeg),
      floorL1: Math.max(worst.floorL1, f.l1),
      floorGaze: Math.max(worst.floorGaze, f.gazeDeg),
    };
    if (!d.sameDominant) dominantChanged++;
    if (!f.sameDominant) floorDominantChanged++;
    rows.push([
      s.replace('subject', ''),
      images.length,
      `${fmt((100 * fromBox) / images.length, 0)} %`,
      `${fmt(full.msPerImage, 1)} / ${fmt(seq.msPerImage, 1)}`,
      `${fmt(d.l1, 3)} / ${fmt(f.l1, 3)}`,
      `${d.sameDominant ? 'same' : '**changed**'} / ${f.sameDominant ? 'same' : '**changed**'}`,
      `${fmt(d.gazeDeg, 2)} / ${fmt(f.gazeDeg, 2)}`,
    ]);
    console.error(`aux-series: ${s} done`);
  }
  console.log(
    table(
      [
        'subject',
        'aux images',
        'analysed from a box',
        'CPU ms an image: full / series',
        'mean emotion, L1 to full: series / 1 px shift',
        'dominant emotion: series / 1 px shift',
        'mean gaze, degrees from full: series / 1 px shift',
      ],
      rows,
    ),
  );
  console.log(
    `\n${subjects.length} videos, ${totals.images} aux images (groups of ${AUX_GROUP}), ${fmt((100 * totals.fromBox) / totals.images, 0)} % analysed from a box; ` +
      `CPU ${fmt(totals.full / totals.images, 1)} ms an image by full detections, ${fmt(totals.series / totals.images, 1)} ms as a series ` +
      `(${fmt(totals.series / totals.full, 2)}x), JPEG decoding included. Largest difference from full detections: mean emotion L1 ${fmt(worst.l1, 3)} ` +
      `(one-pixel shift: ${fmt(worst.floorL1, 3)}), mean gaze ${fmt(worst.gaze, 2)}° (${fmt(worst.floorGaze, 2)}°); dominant emotion changed in ` +
      `${dominantChanged} of ${subjects.length} videos (one-pixel shift: ${floorDominantChanged}).`,
  );
}

await main();
