// Skin patches (bias-eval-rppg, 15 fps MPEG-4 AVI, 200x200 forehead/cheek patches): whole-patch
// mean RGB trace → our trace → heart-rate chain (`analyzeTrace`), against the clip's mean
// oximeter heart rate. Reported per country (Sierra Leone, India) and overall.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeTrace, traceFromRgb } from '../../packages/engine/src/index.js';
import { cachePath, DATA_DIR, decodeFrames, errorStats, fmt, probeVideo, statsRow, table } from './common.js';

interface CachedTrace {
  tMicros: number[];
  r: number[];
  g: number[];
  b: number[];
}

async function patchTrace(file: string): Promise<CachedTrace> {
  const cache = cachePath('skin-patches', file.replace(/[/\\]/g, '_') + '.json');
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as CachedTrace;
  const path = join(DATA_DIR, 'skin-patches', file);
  const info = probeVideo(path);
  const tr: CachedTrace = { tMicros: [], r: [], g: [], b: [] };
  const px = info.width * info.height;
  await decodeFrames(path, info.width, info.height, (rgb, i) => {
    let r = 0;
    let g = 0;
    let b = 0;
    for (let j = 0; j < rgb.length; j += 3) {
      r += rgb[j];
      g += rgb[j + 1];
      b += rgb[j + 2];
    }
    const t = info.ptsSec[i] ?? (info.ptsSec.length ? info.ptsSec[info.ptsSec.length - 1] + (i - info.ptsSec.length + 1) / 15 : i / 15);
    tr.tMicros.push(Math.round(t * 1e6));
    tr.r.push(r / px);
    tr.g.push(g / px);
    tr.b.push(b / px);
  });
  if (tr.tMicros.length === 0) throw new Error(`no frames decoded from ${file}`);
  writeFileSync(cache, JSON.stringify(tr));
  return tr;
}

export async function run(): Promise<string> {
  const csv = readFileSync(join(DATA_DIR, 'skin-patches/index.csv'), 'utf8').trim().split('\n').slice(1);
  const rows: (string | number)[][] = [];
  const groups = new Map<string, { est: number[]; ref: number[]; pub: number[]; pubRef: number[] }>();
  const add = (k: string, est: number, ref: number, published: number | null): void => {
    const g = groups.get(k) ?? { est: [], ref: [], pub: [], pubRef: [] };
    g.est.push(est);
    g.ref.push(ref);
    if (published !== null) {
      g.pub.push(published);
      g.pubRef.push(ref);
    }
    groups.set(k, g);
  };
  for (const line of csv) {
    const [file, country, , roi, gt] = line.split(',');
    const ref = Number(gt);
    const tr = await patchTrace(file);
    const m = analyzeTrace(traceFromRgb(tr.tMicros, tr.r, tr.g, tr.b));
    const est = m.stats.internalHeartRateBpm ?? NaN;
    const published = m.cardiac.heartRate?.value ?? null;
    const label = country.replace('_', ' ');
    if (Number.isFinite(est)) {
      add(label, est, ref, published);
      add('all', est, ref, published);
    }
    rows.push([file.split('/').pop()!, label, roi, fmt(ref), fmt(est), fmt(est - ref), m.quality.level, fmt(m.stats.medianSqi, 2), m.stats.pulseMethod]);
  }
  const summary = [...groups].map(([k, g]) => statsRow(k, errorStats(g.est, g.ref)));
  // No-information baselines: what a guess that never looks at the video scores on these
  // references. The leave-one-out mean uses the other clips' references only.
  const all = groups.get('all');
  const floors: (string | number)[][] = [];
  if (all && all.ref.length > 1) {
    const sum = all.ref.reduce((a, b) => a + b, 0);
    const loo = all.ref.map((_, i) => (sum - all.ref[i]) / (all.ref.length - 1));
    // Pearson r is not shown: a constant has none, and the leave-one-out mean is -1 by construction.
    const noR = (row: (string | number)[]): (string | number)[] => [...row.slice(0, 4), '–'];
    floors.push(noR(statsRow('constant 75 bpm (no video)', errorStats(all.ref.map(() => 75), all.ref))));
    floors.push(noR(statsRow('leave-one-out mean of the other references (no video)', errorStats(loo, all.ref))));
  }
  const pub = [...groups].map(([k, g]) => [...statsRow(k, errorStats(g.pub, g.pubRef)), `${g.pub.length}/${g.est.length}`]);
  return [
    '## Skin patches: whole-patch trace → heart rate',
    '',
    'Input: the plain mean RGB of every 200×200 patch frame (the patch is all skin), timestamps from the container, through `analyzeTrace` (resampling, POS and CHROM, tracked heart rate). Reference: the clip\'s mean oximeter heart rate. Baselines from the notes: plain CHROM 9.9, POS 11.8 MAE. Target MAE ≤ 5 bpm (not met). What the data hold: in the capture-averaged POS spectrum (20 s windows) the power within ±0.1 Hz of the reference sits at a median rank of 0.89 in the band (0.5 would be chance), so a weak pulse is there, but the top peak is usually elsewhere, and patches of one recording agree on the same wrong peak (both cheeks of Sierra Leone video42 near 90 bpm against 72.5): a shared artifact that a mean-RGB trace gives no reference to reject. One suspect was ruled out: the clips are MPEG-4 Part 2 at low bitrate, most with an I-frame every 12 frames at 15 fps (1.25 Hz = 75 bpm, inside the reference range), but subtracting the component locked to the I-frame phase (a side experiment, plain POS with Welch peak picking) left the error where it was (17.0 → 17.5 MAE), so the codec\'s group of pictures is not that artifact. The previous chain scored 6.9 here by averaging whole-band tracked rates, which pulls noise towards the band centre (about the population mean); the anchored capture rate that fixed ubfc2 (see its section below) picks the strongest peak instead.',
    '',
    'All items (the chain\'s heart rate, whatever the quality verdict):',
    '',
    table(['group', 'n', 'MAE (bpm)', 'RMSE (bpm)', 'Pearson r'], summary),
    '',
    'What a guess that never looks at the video scores here (the references span 66–85 bpm around a mean of 77, so a constant lands within 5 bpm on average): an MAE ≤ 5 on this set does not by itself show that a pulse was found; Pearson r near 0 says the chain\'s estimates carry no more information than such a guess.',
    '',
    table(['guess', 'n', 'MAE (bpm)', 'RMSE (bpm)', 'Pearson r'], floors),
    '',
    'Published values only (items the quality gate let through; coverage in the last column):',
    '',
    table(['group', 'n', 'MAE (bpm)', 'RMSE (bpm)', 'Pearson r', 'coverage'], pub),
    '',
    table(['file', 'country', 'roi', 'reference', 'ours', 'error', 'quality', 'median SQI', 'method'], rows),
  ].join('\n');
}
