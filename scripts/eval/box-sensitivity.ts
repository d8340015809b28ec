// How much the UBFC-rPPG end-to-end figures move when the face crop's box is a pixel or a per cent
// off: the same labelled ubfc2 videos through `videoToPackets` (the batch video path) and the
// engine, once with the tracker's own box and once per perturbation (`cropBox`, evaluation only).
// None of these boxes is better than another, so the spread is the noise floor that any change to
// the packets (a faster tracker, another crop) is judged against on these ten clips.
//
// Run: npx tsx --conditions source scripts/eval/box-sensitivity.ts   (about a minute per variant)
//      ... box-sensitivity.ts --steady   the same perturbations with the fast settings' steady
//      rates (STEADY_VIDEO): a paired comparison of a packet-changing speed-up against the spread
//      ... box-sensitivity.ts --fast     likewise with FAST_VIDEO (steady rates and half-size decoding)
//      ... box-sensitivity.ts --steady=1.5,4   other steady rates: analyses a second, seconds between
//      full detections while the face is steady
//      ... box-sensitivity.ts --phases   the tracker's own box, tracked from frames 0, 2, 4 and 6 (the
//      analysed frames at another phase, as a live capture's start makes them): a yardstick with
//      four draws per subject; with --kalman=Q (the crop smoother's process noise) or --hz=N (analyses
//      a second) it judges those settings on the same phases
// Not part of `npm run eval` (it decodes every video once per variant; nothing is cached).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Box } from '../../packages/protocol/src/index.js';
import { buildRgbTrace } from '../../packages/engine/src/index.js';
import { analyzeTraceWithInternals } from '../../packages/engine/src/estimators/analyze.js';
import { FAST_VIDEO, videoToPackets, type VideoOptions } from '../../packages/media/src/index.js';
import { DATA_DIR, fmt } from './common.js';
import { steadyArg } from '../testing/steady-arg.js';

interface Variant {
  name: string;
  map?: (b: Box) => Box;
  startFrame?: number;
}

const shift = (dx: number, dy: number) => (b: Box) => ({ ...b, x: b.x + dx, y: b.y + dy });
const scale = (k: number) => (b: Box) => ({
  x: b.x + (b.width * (1 - k)) / 2,
  y: b.y + (b.height * (1 - k)) / 2,
  width: b.width * k,
  height: b.height * k,
});

export const VARIANTS: Variant[] = [
  { name: "the tracker's box (as shipped)" },
  { name: '1 px right', map: shift(1, 0) },
  { name: '1 px left', map: shift(-1, 0) },
  { name: '1 px down', map: shift(0, 1) },
  { name: '1 px up', map: shift(0, -1) },
  { name: 'half a pixel right and down', map: shift(0.5, 0.5) },
  { name: '1 % larger', map: scale(1.01) },
  { name: '1 % smaller', map: scale(0.99) },
];

/** The tracker's own box from other starting frames (at 30 fps and 4 Hz, an analysis every 7.5 frames). */
export const PHASES: Variant[] = [0, 2, 4, 6].map((k) => ({
  name: k === 0 ? 'tracked from frame 0 (as shipped)' : `tracked from frame ${k}`,
  startFrame: k,
}));

interface Item {
  id: string;
  video?: string;
  referenceHeartRateBpm?: number;
}

export interface VariantResult {
  name: string;
  published: number;
  labelled: number;
  publishedMae: number;
  allMae: number;
  /** Per subject: the chain's rate minus the reference, whether published, the gate's evidence. */
  subjects: { id: string; error: number; published: boolean; evidence: number }[];
}

export async function runVariant(v: Variant, items: Item[], base: VideoOptions = {}): Promise<VariantResult> {
  const subjects: VariantResult['subjects'] = [];
  for (const item of items) {
    const r = await videoToPackets(join(DATA_DIR, item.video!), { ...base, cropBox: v.map, startFrame: v.startFrame });
    if (!r.ok) throw new Error(`${item.id}: ${r.code}`);
    const a = analyzeTraceWithInternals(buildRgbTrace(r.packets));
    const est = a.measurement.stats.internalHeartRateBpm ?? NaN;
    subjects.push({
      id: item.id,
      error: est - item.referenceHeartRateBpm!,
      published: a.measurement.cardiac.heartRate != null,
      evidence: a.evidence?.score ?? NaN,
    });
  }
  const pub = subjects.filter((s) => s.published);
  const mae = (xs: typeof subjects) => xs.reduce((t, s) => t + Math.abs(s.error), 0) / Math.max(1, xs.length);
  return {
    name: v.name,
    published: pub.length,
    labelled: subjects.length,
    publishedMae: mae(pub),
    allMae: mae(subjects),
    subjects,
  };
}

function labelledItems(): Item[] {
  const manifest = JSON.parse(readFileSync(join(DATA_DIR, 'MANIFEST.json'), 'utf8')) as {
    sets: { name: string; items?: Item[] }[];
  };
  const set = manifest.sets.find((s) => s.name === 'ubfc2');
  return (set?.items ?? []).filter((i) => i.video && i.referenceHeartRateBpm !== undefined);
}

async function main(): Promise<void> {
  const items = labelledItems();
  const rates = steadyArg(process.argv);
  const base: VideoOptions = process.argv.includes('--fast')
    ? { ...FAST_VIDEO }
    : rates
      ? { steady: rates }
      : process.argv.includes('--steady')
        ? { steady: FAST_VIDEO.steady }
        : {};
  const number = (flag: string): number | undefined => {
    const a = process.argv.find((x) => x.startsWith(`--${flag}=`));
    return a ? Number(a.slice(flag.length + 3)) : undefined;
  };
  const q = number('kalman');
  if (q !== undefined) base.kalman = { processNoise: q };
  const hz = number('hz');
  if (hz !== undefined) base.analysisHz = hz;
  const phases = process.argv.includes('--phases');
  const results: VariantResult[] = [];
  for (const v of phases ? PHASES : VARIANTS) {
    const t0 = Date.now();
    results.push(await runVariant(v, items, base));
    console.error(`${v.name}: ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
  const ids = items.map((i) => i.id.replace('subject', ''));
  const lines = [
    `| ${phases ? 'tracking phase' : 'crop box'} | published | published MAE | MAE, every labelled video | evidence per subject (${ids.join(', ')}; published in bold) |`,
    '| --- | --- | --- | --- | --- |',
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.published}/${r.labelled} | ${fmt(r.publishedMae, 2)} | ${fmt(r.allMae, 2)} | ${r.subjects
          .map((s) => (s.published ? `**${fmt(s.evidence, 2)}**` : fmt(s.evidence, 2)))
          .join(', ')} |`,
    ),
  ];
  if (phases) {
    const n = results.reduce((t, r) => t + r.labelled, 0);
    const all = results.flatMap((r) => r.subjects);
    const pub = all.filter((s) => s.published);
    const mae = (xs: typeof all) => xs.reduce((t, s) => t + Math.abs(s.error), 0) / Math.max(1, xs.length);
    lines.push(
      `| all phases | ${pub.length}/${n} | ${fmt(mae(pub), 2)} | ${fmt(mae(all), 2)} | mean evidence ${fmt(
        all.reduce((t, s) => t + s.evidence, 0) / all.length,
        2,
      )} |`,
    );
  }
  console.log(lines.join('\n'));
}

if (process.argv[1] && process.argv[1] === fileURLToPath(import.meta.url)) void main();
