// Eval section "What camera HRV needs" (issue 17, item 5): on phantom captures with known RR series,
// at which pulse SNR, frame rate and H.264 bitrate the chain's RMSSD and SDNN come within
// max(10 ms, 20 %) of the truth; whether the HRV publication rule (estimators/analyze.ts
// `hrvPublishable`, beats/timing-noise.ts) publishes only such captures; and where the labelled
// ubfc2 videos stand against that bar (the ubfc2 section's face crops).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRgbTrace } from '../../packages/engine/src/index.js';
import { analyzeTraceWithInternals } from '../../packages/engine/src/estimators/analyze.js';
import { DATA_DIR, ffprobePath, fmt, readManifest, table } from './common.js';
import {
  conditions,
  hrvOk,
  outcomes,
  PHANTOM_SEC,
  pulseSnrDb,
  TOL_MS,
  TOL_SHARE,
  withinTol,
  type Outcome,
} from './hrv-bar-data.js';
import { contactReference, parseGroundTruth } from './ubfc2-hrv.js';
import { cropPackets, subjectCrops } from './ubfc2.js';
import type { HeadlineRow, SectionOutput } from '../headline.js';

/** Share of captures at or above an SNR that must pass for that SNR to be the bar. */
const BAR_SHARE = 0.8;
const median = (v: number[]): number => {
  const f = v.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return f.length ? f[Math.floor((f.length - 1) / 2)] : NaN;
};

/**
 * The lowest SNR s such that at least BAR_SHARE of the captures with SNR ≥ s (and at least 3 of
 * them) pass; NaN when no SNR does.
 */
export function snrBar(os: Outcome[]): number {
  const sorted = [...os].filter((o) => Number.isFinite(o.snrDb)).sort((a, b) => b.snrDb - a.snrDb);
  let ok = 0;
  let bar = NaN;
  sorted.forEach((o, i) => {
    if (hrvOk(o)) ok++;
    if (i + 1 >= 3 && ok / (i + 1) >= BAR_SHARE) bar = o.snrDb;
  });
  return bar;
}

function groupRow(label: (string | number)[], os: Outcome[]): (string | number)[] {
  return [
    ...label,
    fmt(median(os.map((o) => o.snrDb)), 1),
    fmt(median(os.map((o) => o.truthRmssd)), 0),
    fmt(median(os.map((o) => o.rmssd - o.truthRmssd)), 0),
    fmt(median(os.map((o) => o.sdnn - o.truthSdnn)), 0),
    fmt(median(os.map((o) => o.timingNoiseMs)), 1),
    `${os.filter(hrvOk).length}/${os.length}`,
    `${os.filter((o) => o.hrvPublished).length}/${os.length}`,
    `${os.filter((o) => o.hrvPublished && !hrvOk(o)).length}`,
  ];
}

const HEAD = [
  'median SNR (dB)',
  'true RMSSD (ms)',
  'RMSSD error (ms)',
  'SDNN error (ms)',
  'timing noise (ms)',
  'within tolerance',
  'HRV published',
  'published outside tolerance',
];

function groupBy<K>(os: Outcome[], key: (o: Outcome) => K): Map<K, Outcome[]> {
  const m = new Map<K, Outcome[]>();
  for (const o of os) m.set(key(o), [...(m.get(key(o)) ?? []), o]);
  return m;
}

function videoKbps(file: string): number {
  const out = execFileSync(ffprobePath(), ['-v', 'error', '-show_entries', 'format=bit_rate', '-of', 'csv=p=0', file]);
  return Number(out.toString().trim()) / 1000;
}

/**
 * The labelled ubfc2 videos against the bar: the face crops of the ubfc2 section (first-frame box,
 * cached by ubfc2.ts; the same crops as its "HRV against the contact PPG" table).
 */
async function realVideoRows(bar: number): Promise<(string | number)[][]> {
  const set = readManifest().sets.find((s) => s.name === 'ubfc2');
  const rows: (string | number)[][] = [];
  for (const item of set?.items ?? []) {
    if (item.referenceHeartRateBpm === undefined || !item.groundTruth || !item.video) continue;
    const { meta, crops } = await subjectCrops(item.video, item.id);
    const { measurement: m, vitals } = analyzeTraceWithInternals(buildRgbTrace(cropPackets(meta, crops)));
    const ref = contactReference(parseGroundTruth(readFileSync(join(DATA_DIR, item.groundTruth), 'utf8')));
    const snr = pulseSnrDb(m.raw.ppgSignal, m.raw.sampleRateHz, ref.beatHrBpm);
    const h = vitals?.hrv;
    const r = ref.hrv;
    const ok = h && r ? withinTol(h.rmssdMs, r.rmssdMs) && withinTol(h.sdnnMs, r.sdnnMs) : false;
    rows.push([
      item.id,
      fmt(snr, 1),
      Number.isFinite(bar) ? (snr >= bar ? 'above' : 'below') : '–',
      fmt(m.stats.meanFps, 1),
      fmt(videoKbps(join(DATA_DIR, item.video)), 0),
      fmt(r?.rmssdMs, 0),
      fmt(h && r ? h.rmssdMs - r.rmssdMs : NaN, 0),
      fmt(h && r ? h.sdnnMs - r.sdnnMs : NaN, 0),
      ok ? 'yes' : 'no',
      m.hrv ? 'yes' : 'no',
    ]);
  }
  return rows;
}

export async function run(): Promise<SectionOutput> {
  const { grid, codec } = conditions();
  const raw = await outcomes(grid);
  const coded = await outcomes(codec);
  const all = [...raw, ...coded];
  const byFps = groupBy(raw, (o) => o.fps);
  // Per frame rate: the weakest pulse from which every capture at that amplitude and above passes.
  const fpsRows = [...byFps].map(([fps, os]) => {
    const amps = [...new Set(os.map((o) => o.amplitude))].sort((a, b) => a - b);
    const need = amps.find((a) => os.filter((o) => o.amplitude >= a).every(hrvOk));
    const at = os.filter((o) => o.amplitude === need);
    return [
      fps,
      need === undefined ? 'none tested' : `${(need * 100).toFixed(1)} %`,
      need === undefined ? '–' : fmt(median(at.map((o) => o.snrDb)), 1),
    ];
  });
  const gridRows = [...groupBy(raw, (o) => `${o.fps}|${o.amplitude}`)].map(([k, os]) => {
    const [fps, amp] = k.split('|');
    return groupRow([fps, `${(Number(amp) * 100).toFixed(1)} %`], os);
  });
  const codecRows = [...groupBy(coded, (o) => `${o.kbps}|${o.amplitude}`)].map(([k, os]) => {
    const [kbps, amp] = k.split('|');
    return groupRow([kbps, `${(Number(amp) * 100).toFixed(1)} %`], os);
  });
  const bar = snrBar(raw.filter((o) => o.fps >= 25));
  const barCodec = snrBar(coded);
  const codecOk = coded.filter(hrvOk).length;
  const codecPubBad = coded.filter((o) => o.hrvPublished && !hrvOk(o)).length;
  const pub = all.filter((o) => o.hrvPublished);
  const pubBad = pub.filter((o) => !hrvOk(o));
  const aboveBar = raw.filter((o) => o.snrDb >= bar && o.fps >= 25);
  const withheldGood = all.filter((o) => !o.hrvPublished && hrvOk(o));
  // A candidate extra condition, evaluated from the same outcomes: the pulse SNR at or above the bar.
  const cand = pub.filter((o) => o.snrDb >= bar);
  const candBad = cand.filter((o) => !hrvOk(o));
  // The rule's own statistic (beats/timing-noise.ts): 3 × timing noise / RMSSD, published when ≤ 0.5.
  const ratio = (o: Outcome): number => (3 * o.timingNoiseMs) / o.rmssd;
  const span = (os: Outcome[]): string => {
    const v = os.map(ratio).filter((x) => Number.isFinite(x));
    return v.length ? `${fmt(Math.min(...v), 2)}–${fmt(Math.max(...v), 2)}` : '–';
  };
  const overlap = (good: Outcome[], bad: Outcome[]): string => {
    const g = good.map(ratio).filter((x) => Number.isFinite(x));
    const b = bad.map(ratio).filter((x) => Number.isFinite(x));
    if (!g.length || !b.length) return '';
    const below = g.filter((x) => x < Math.min(...b)).length;
    return `: a stricter threshold below ${fmt(Math.min(...b), 2)} would withhold every capture outside the tolerance and keep ${below} of the ${g.length} within it (a choice made on these same captures, so not adopted without a fresh set)`;
  };
  const real = await realVideoRows(bar);
  const headline: HeadlineRow[] = [
    {
      area: 'Camera HRV bar (phantom)',
      figure: `HRV published outside the tolerance (RMSSD and SDNN within max(${TOL_MS} ms, ${TOL_SHARE * 100} %) of the truth), phantom at 15–60 fps and through H.264`,
      value: `${pubBad.length} of ${pub.length} published (${all.length} captures); SNR bar ${fmt(bar, 1)} dB at ≥ 25 fps; within tolerance through H.264 ≤ 2 Mbit/s: ${codecOk}/${coded.length}`,
      target: '0 published outside tolerance',
      met: pubBad.length === 0,
      reference: 'phantom truth (known RR series)',
      command: '`npm run eval`',
    },
  ];
  const markdown = [
    '## What camera HRV needs (phantom bar)',
    '',
    `Phantom captures of ${PHANTOM_SEC} s with a known RR series (RSA 60 ms peak to peak, 25 ms AR jitter; heart rate 64 bpm (seed 1) and, at 30 fps, also 88 bpm (seed 2)) at graded pulse amplitudes and frame rates, crops analysed as rendered (sensor noise 2 levels per pixel, 8-bit), and at 30 fps through an H.264 round trip at several bitrates (scripts/eval/phantom-codec.ts: the 36×36 crop scaled to a 180×180 face in a 640×480 frame with temporal sensor noise, x264 at the bitrate, the face box scaled back; the tracker is bypassed). Pulse SNR: power within ±0.1 Hz of the true rate over the rest of the 42–150 bpm band (leaving out ±0.1 Hz around the first harmonic, so the figure does not depend on whether the harmonic falls in the band), Welch spectrum of 20 s segments of the chain's pulse signal (after de Haan & Jeanne 2013). Tolerance: RMSSD and SDNN each within max(${TOL_MS} ms, ${TOL_SHARE * 100} %) of the truth, from the chain's own beats whatever the gate says. "HRV published" is the measurement's \`hrv\` block (a \`good\` capture, ≥ 15 NN intervals, ≥ 60 % accepted, beat-timing noise × 3 ≤ RMSSD / 2).`,
    '',
    `**The bar.** Pulse SNR: ${fmt(bar, 1)} dB at ≥ 25 fps on the rendered crops (the lowest SNR from which at least ${BAR_SHARE * 100} % of the captures at or above it pass, "–" when none does); the figure is approximate and rate-dependent: the 88 bpm captures were within the tolerance at 8.4–8.6 dB, because a faster rhythm with the same RR variability spreads its spectral line wider than the ±0.1 Hz the SNR counts. Frame rate: the weakest pulse that passes at each rate (every capture at that amplitude and above within the tolerance):`,
    '',
    table(['fps', 'weakest passing amplitude', 'its SNR (dB)'], fpsRows),
    '',
    `Bitrate: through H.264 at 30 fps, ${codecOk} of ${coded.length} captures (150–2000 kbit/s at 640×480, amplitude 2 and 4 %, which pass as rendered) are within the tolerance, ${codecPubBad} of them were published anyway; SNR bar through the codec ${fmt(barCodec, 1)} dB. ${codecOk === 0 ? `No tested bitrate reaches the bar: the codec's coarse coding of the small frame-to-frame changes of a nearly static face inflates RMSSD by ${fmt(Math.min(...coded.map((o) => o.rmssd - o.truthRmssd)), 0)}–${fmt(Math.max(...coded.map((o) => o.rmssd - o.truthRmssd)), 0)} ms even for a pulse four times the typical one (the mechanism was not isolated: quantization and skipped blocks are the likely cause). Camera HRV from an H.264 stream up to 2 Mbit/s at 640×480 is not supported by this data.` : ''}`,
    '',
    `The rule against the bar, over all ${all.length} phantom captures: HRV published ${pub.length}, of which ${pubBad.length} outside the tolerance; ${withheldGood.length} within the tolerance were withheld; ${aboveBar.length} rendered captures at ≥ 25 fps are at or above the SNR bar, ${aboveBar.filter((o) => o.hrvPublished).length} of them published.`,
    '',
    `The rule's statistic, 3 × timing noise / RMSSD (published at ≤ 0.5), over the published captures: ${span(pub.filter(hrvOk))} within the tolerance, ${span(pubBad)} outside it${overlap(pub.filter(hrvOk), pubBad)}.`,
    '',
    `A candidate extra condition, pulse SNR ≥ the bar (${fmt(bar, 1)} dB; measured here at the true rate, which the chain's own rate matched), would leave ${cand.length} published, ${candBad.length} of them outside the tolerance.`,
    '',
    'Rendered crops, per frame rate and pulse amplitude (1 capture each, 2 at 30 fps; errors are medians, chain − truth):',
    '',
    table(['fps', 'amplitude', ...HEAD], gridRows),
    '',
    'Through H.264 at 30 fps, per bitrate (kbit/s, 640×480) and pulse amplitude:',
    '',
    table(['kbit/s', 'amplitude', ...HEAD], codecRows),
    '',
    `Real video: the labelled ubfc2 subjects (the ubfc2 section's face crops), SNR at the contact-PPG beat rate, HRV against the contact-PPG HRV (scripts/eval/ubfc2-hrv.ts):`,
    '',
    table(
      [
        'subject',
        'SNR (dB)',
        'vs bar',
        'fps',
        'kbit/s',
        'reference RMSSD (ms)',
        'RMSSD error (ms)',
        'SDNN error (ms)',
        'within tolerance',
        'HRV published',
      ],
      real,
    ),
    '',
  ].join('\n');
  return { markdown, headline };
}
