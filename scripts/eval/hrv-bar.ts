// Eval section "What camera HRV needs" (issue 17, item 5): on phantom captures with known RR series,
// at which pulse SNR, frame rate and H.264 bitrate the chain's RMSSD and SDNN come within
// max(10 ms, 20 %) of the truth; the HRV rule's threshold (estimators/hrv-rule.ts `hrvPublishable`,
// beats/timing-noise.ts) as chosen on calibration seeds and judged on fresh validation seeds; and
// where the labelled ubfc2 videos stand against that bar (the ubfc2 section's face crops).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildRgbTrace } from '../../packages/engine/src/index.js';
import { analyzeTraceWithInternals } from '../../packages/engine/src/estimators/analyze.js';
import { DATA_DIR, ffprobePath, fmt, readManifest, table } from './common.js';
import { TIMING_NOISE_MAX_SHARE, TIMING_NOISE_RMSSD_FACTOR } from '../../packages/engine/src/beats/timing-noise.js';
import { HRV_MIN_SAMPLE_RATE_HZ } from '../../packages/engine/src/estimators/hrv-rule.js';
import {
  CALIBRATION_SEEDS,
  CODEC_CALIBRATION_SEEDS,
  CODEC_VALIDATION_SEEDS,
  conditions,
  FRAME_RATES,
  hrvOk,
  isCalibration,
  outcomes,
  PHANTOM_SEC,
  publishable,
  SEEN_VALIDATION_SEEDS,
  VALIDATION_SEEDS,
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
    `${os.filter(publishable).length}/${os.length}`,
    `${os.filter((o) => publishable(o) && !hrvOk(o)).length}`,
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
      fmt(h ? (TIMING_NOISE_RMSSD_FACTOR * (vitals?.timingNoiseMs ?? NaN)) / h.rmssdMs : NaN, 2),
      ok ? 'yes' : 'no',
      m.hrv ? 'yes' : 'no',
    ]);
  }
  return rows;
}

/** The rule's statistic (beats/timing-noise.ts): 3 × timing noise / RMSSD, published at ≤ TIMING_NOISE_MAX_SHARE. */
export const noiseShare = (o: Outcome): number => (TIMING_NOISE_RMSSD_FACTOR * o.timingNoiseMs) / o.rmssd;
/** Grid on which the share is chosen (coarse, so it is not fitted to one capture's value). */
const SHARE_GRID = Array.from({ length: 20 }, (_, i) => (i + 1) / 20);

/** Published under thresholds: eligible, noise share ≤ share and frame rate ≥ minFps. */
const passes = (o: Outcome, share: number, minFps: number): boolean =>
  o.eligible && noiseShare(o) <= share + 1e-9 && o.fps >= minFps;

export interface CalibratedRule {
  share: number;
  /** The lowest tested frame rate the rule admits (the engine's floor must lie above the next lower one). */
  minFps: number;
  published: number;
}

/**
 * Highest frame-rate floor the rule may choose: the 29–30 fps of ordinary webcams must pass, or the
 * rule would publish no webcam's HRV however many 60 fps captures it admits.
 */
export const WEBCAM_FPS = 30;

/**
 * The thresholds the calibration captures choose: of the (share, lowest admitted tested frame rate
 * ≤ WEBCAM_FPS) pairs that publish no eligible calibration capture outside the tolerance, the one
 * that publishes the most (ties: the smaller share, then the higher frame rate). Null when none
 * publishes any.
 */
export function calibratedRule(os: Outcome[], frameRates: number[], maxFloorFps = WEBCAM_FPS): CalibratedRule | null {
  let best: CalibratedRule | null = null;
  const rates = [...frameRates].filter((f) => f <= maxFloorFps).sort((a, b) => b - a);
  for (const share of SHARE_GRID)
    for (const minFps of rates) {
      const p = os.filter((o) => passes(o, share, minFps));
      if (!p.length || p.some((o) => !hrvOk(o))) continue;
      if (!best || p.length > best.published) best = { share, minFps, published: p.length };
    }
  return best;
}

function ruleRow(label: string, os: Outcome[], pub: (o: Outcome) => boolean): (string | number)[] {
  const p = os.filter(pub);
  return [
    label,
    os.length,
    os.filter(hrvOk).length,
    os.filter((o) => o.eligible).length,
    p.length,
    p.filter(hrvOk).length,
    p.filter((o) => !hrvOk(o)).length,
    os.filter((o) => !pub(o) && hrvOk(o)).length,
  ];
}

export async function run(): Promise<SectionOutput> {
  const { grid, codec } = conditions();
  const raw = await outcomes(grid, 'rendered');
  const coded = await outcomes(codec, 'h264');
  const all = [...raw, ...coded];
  const cal = all.filter(isCalibration);
  const val = all.filter((o) => !isCalibration(o));
  const chosen = calibratedRule(cal, FRAME_RATES);
  const unconstrained = calibratedRule(cal, FRAME_RATES, Infinity);
  const engineShare = TIMING_NOISE_MAX_SHARE;
  const engineFps = HRV_MIN_SAMPLE_RATE_HZ;
  const below = chosen ? Math.max(0, ...FRAME_RATES.filter((f) => f < chosen.minFps)) : NaN;
  // The engine's floor must admit the chosen rate and exclude the next lower tested one.
  const agrees =
    chosen !== null && engineShare <= chosen.share + 1e-9 && engineFps <= chosen.minFps && engineFps > below;
  const valPub = val.filter(publishable);
  const valBad = valPub.filter((o) => !hrvOk(o));
  const calPub = cal.filter(publishable);
  const calBad = calPub.filter((o) => !hrvOk(o));
  // The earlier validation seeds, seen before this choice and now part of the calibration.
  const seen = cal.filter((o) =>
    o.kbps === null ? SEEN_VALIDATION_SEEDS.includes(o.seed) : [2, 102].includes(o.seed),
  );
  const byFps = groupBy(raw, (o) => o.fps);
  // Per frame rate: the weakest pulse from which at least BAR_SHARE of the captures at that amplitude and above pass.
  const fpsRows = [...byFps].map(([fps, os]) => {
    const amps = [...new Set(os.map((o) => o.amplitude))].sort((a, b) => a - b);
    const need = amps.find((a) => {
      const above = os.filter((o) => o.amplitude >= a);
      return above.filter(hrvOk).length >= BAR_SHARE * above.length;
    });
    const at = os.filter((o) => o.amplitude === need);
    return [
      fps,
      need === undefined ? 'none tested' : `${(need * 100).toFixed(1)} %`,
      need === undefined ? '–' : fmt(median(at.map((o) => o.snrDb)), 1),
      `${os.filter(publishable).length}/${os.length}`,
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
  const codecPub = coded.filter(publishable).length;
  const oldRule = (o: Outcome): boolean => passes(o, 0.5, 0);
  const ruleTable = table(
    [
      'rule',
      'captures',
      'within tolerance',
      'eligible (other conditions)',
      'HRV published',
      'published within tolerance',
      'published outside tolerance',
      'within tolerance, withheld',
    ],
    [
      ruleRow('calibration seeds, previous rule (share ≤ 0.50)', cal, oldRule),
      ruleRow('validation seeds, previous rule (share ≤ 0.50)', val, oldRule),
      ruleRow('calibration seeds, share ≤ 0.35, any frame rate', cal, (o) => passes(o, 0.35, 0)),
      ruleRow('validation seeds, share ≤ 0.35, any frame rate', val, (o) => passes(o, 0.35, 0)),
      ruleRow('calibration seeds, share ≤ 0.35 from 30 fps (the previous rule)', cal, (o) => passes(o, 0.35, 30)),
      ruleRow('validation seeds, share ≤ 0.35 from 30 fps (the previous rule)', val, (o) => passes(o, 0.35, 30)),
      ruleRow(`calibration seeds, this rule`, cal, publishable),
      ruleRow(`of them seeds 201–206 (the earlier validation), this rule`, seen, publishable),
      ruleRow(`validation seeds, this rule`, val, publishable),
    ],
  );
  const real = await realVideoRows(bar);
  const headline: HeadlineRow[] = [
    {
      area: 'Camera HRV bar (phantom)',
      figure: `HRV published outside the tolerance (RMSSD and SDNN within max(${TOL_MS} ms, ${TOL_SHARE * 100} %) of the truth) on the validation seeds, phantom at 15–60 fps and through H.264`,
      value: `${valBad.length} of ${valPub.length} published (${val.length} captures; ${valPub.length - valBad.length} within tolerance published); threshold chosen on ${cal.length} calibration captures`,
      target: '0 published outside tolerance',
      met: valBad.length === 0 && agrees,
      reference: 'phantom truth (known RR series)',
      command: '`npm run eval`',
    },
  ];
  const markdown = [
    '## What camera HRV needs (phantom bar)',
    '',
    `Phantom captures of ${PHANTOM_SEC} s with a known RR series at graded pulse amplitudes (1–4 %) and frame rates (15–60 fps), crops analysed as rendered (sensor noise 2 levels per pixel, 8-bit), and at 30 fps through an H.264 round trip at several bitrates (scripts/eval/phantom-codec.ts: the 36×36 crop scaled to a 180×180 face in a 640×480 frame with temporal sensor noise, x264 at the bitrate, the face box scaled back; the tracker is bypassed). Each seed has its own rhythm: heart rate 55–104 bpm, respiratory sinus arrhythmia 30–90 ms peak to peak, other jitter 10–35 ms (true RMSSD ${fmt(Math.min(...all.map((o) => o.truthRmssd)), 0)}–${fmt(Math.max(...all.map((o) => o.truthRmssd)), 0)} ms). Two sets of seeds over the same conditions: **calibration** (${CALIBRATION_SEEDS.length} seeds as rendered, ${CODEC_CALIBRATION_SEEDS.length} through H.264; ${cal.length} captures), on which the rule's threshold is chosen, and **validation** (${VALIDATION_SEEDS.length} and ${CODEC_VALIDATION_SEEDS.length} fresh seeds; ${val.length} captures), which judges it. Pulse SNR: power within ±0.1 Hz of the true rate over the rest of the 42–150 bpm band (leaving out ±0.1 Hz around the first harmonic), Welch spectrum of 20 s segments of the chain's pulse signal (after de Haan & Jeanne 2013). Tolerance: RMSSD and SDNN each within max(${TOL_MS} ms, ${TOL_SHARE * 100} %) of the truth, from the chain's own beats whatever the gate says.`,
    '',
    `**The rule** (estimators/hrv-rule.ts \`hrvPublishable\`, docs/engine.md step 8): HRV is published for a \`good\` capture of ≥ 20 s with ≥ 15 NN intervals and ≥ 60 % accepted ("eligible") when the beat-timing noise share, 3 × timing noise / RMSSD, is at most ${fmt(engineShare, 2)} (0.50 before issue 17, then 0.35) and the capture is sampled at ≥ ${engineFps} Hz. The calibration seeds choose ${chosen ? `share ≤ ${fmt(chosen.share, 2)} from ${chosen.minFps} fps up (${chosen.published} calibration captures published, none outside the tolerance)` : 'nothing'}: of the pairs (share on a 0.05 grid, lowest admitted tested frame rate, at most ${WEBCAM_FPS} fps) that publish no eligible calibration capture outside the tolerance, the one that publishes the most. The frame-rate cap keeps webcams in: ${unconstrained ? `without it the calibration would choose share ≤ ${fmt(unconstrained.share, 2)} from ${unconstrained.minFps} fps up (${unconstrained.published} published)` : 'without it nothing is chosen'}, which publishes no 29–30 fps capture's HRV (the cap was added after seeing this, on the calibration seeds only). The engine's constants (beats/timing-noise.ts \`TIMING_NOISE_MAX_SHARE\`, hrv-rule.ts \`HRV_MIN_SAMPLE_RATE_HZ\`, set between the tested rates so that a 29–30 fps webcam passes) ${agrees ? 'are that choice' : '**differ from that choice**'}. How it was chosen: the share alone, chosen on seeds 1–6 (0.35), published 4 of 45 HRVs of seeds 101–106 outside the tolerance (all at 15–25 fps, RMSSD 11–27 ms too high); those seeds joined the calibration, the frame-rate floor was added, and seeds 201–206 then published 3 of 14 outside it. Two of those three (seed 203 at 30 fps, a 3 and a 4 % pulse, RMSSD 13–14 ms too high whatever the pulse) were a flaw of the beat timing, not noise: the background regression removed chance fits of the corners' sensor noise (shrunk, not dropped) from the pulse the beats were timed on, which moved the beats by a pulse-sized amount (beat-time error SD 10.8 ms, 4.1 ms without the regression); beats are now timed on a pulse from which only significant fits are removed (docs/engine.md, step 5). Seeds 201–206 (and H.264 seeds 2 and 102) then joined the calibration, the thresholds were chosen again on all ${CALIBRATION_SEEDS.length} seeds, and seeds ${VALIDATION_SEEDS[0]}–${VALIDATION_SEEDS[VALIDATION_SEEDS.length - 1]} (H.264: ${CODEC_VALIDATION_SEEDS.join(' and ')}), never analysed before, are the validation. A beat-template SNR (each beat against the capture's average beat) was tried as the second condition and dropped: on the phantom it levels off at 15–18 dB whatever the pulse amplitude (a 2 % and an 8 % pulse at sensor noise 1 and 0.5 both gave 15.5–15.8 dB), so it measured the beat shape's variation, not the noise, and would have withheld the strong-pulse case that is within the tolerance. The spectral pulse SNR is rate-dependent (above), so it was not a candidate.`,
    '',
    ruleTable,
    '',
    `Validation: ${valBad.length} of ${valPub.length} published HRVs outside the tolerance, ${valPub.length - valBad.length} within it (of ${val.filter(hrvOk).length} within the tolerance in all; the previous rule: ${val.filter((o) => oldRule(o) && !hrvOk(o)).length} of ${val.filter(oldRule).length}). Calibration: ${calBad.length} of ${calPub.length}. ${valBad.length ? `Those outside it: ${valBad.map((o) => `${o.fps} fps, ${(o.amplitude * 100).toFixed(1)} %${o.kbps === null ? '' : `, H.264 ${o.kbps} kbit/s`}, seed ${o.seed} (share ${fmt(noiseShare(o), 2)}, RMSSD ${fmt(o.rmssd - o.truthRmssd, 1)} ms, SDNN ${fmt(o.sdnn - o.truthSdnn, 1)} ms off)`).join('; ')}. A noise share cannot see a bias of the beat timing (an error that stays as the pulse grows) nor codec distortion, which moves both of its timings alike. ` : ''}The price is coverage: most captures whose HRV was within the tolerance are withheld, because the timing-noise estimate is itself noisy (the noise part of a measured RMSSD is 1.5–6 times it).`,
    '',
    `**What it needs.** Pulse SNR: ${fmt(bar, 1)} dB at ≥ 25 fps on the rendered crops (the lowest SNR from which at least ${BAR_SHARE * 100} % of the captures at or above it are within the tolerance, "–" when none is); approximate and rate-dependent (a faster rhythm with the same RR variability spreads its spectral line wider than the ±0.1 Hz the SNR counts, so the same timing precision shows a lower SNR at 90–100 bpm). Frame rate: the weakest pulse from which at least ${BAR_SHARE * 100} % of the captures at that amplitude and above are within the tolerance, all seeds:`,
    '',
    table(['fps', 'weakest passing amplitude', 'its median SNR (dB)', 'HRV published'], fpsRows),
    '',
    `Bitrate: through H.264 at 30 fps (150–2000 kbit/s at 640×480, pulse 2 and 4 %, which are mostly within the tolerance as rendered), ${codecOk} of ${coded.length} captures are within the tolerance and ${codecPub} published; SNR bar through the codec ${fmt(barCodec, 1)} dB. ${codecOk === 0 ? `No tested bitrate reaches the bar: the codec's coarse coding of the small frame-to-frame changes of a nearly static face inflates RMSSD by ${fmt(Math.min(...coded.map((o) => o.rmssd - o.truthRmssd)), 0)}–${fmt(Math.max(...coded.map((o) => o.rmssd - o.truthRmssd)), 0)} ms even for a pulse four times the typical one (the mechanism was not isolated: quantization and skipped blocks are the likely cause). Camera HRV from an H.264 stream up to 2 Mbit/s at 640×480 is not supported by this data.` : ''}`,
    '',
    `Rendered crops, per frame rate and pulse amplitude (${CALIBRATION_SEEDS.length + VALIDATION_SEEDS.length} seeds each, both sets; errors are medians, chain − truth):`,
    '',
    table(['fps', 'amplitude', ...HEAD], gridRows),
    '',
    `Through H.264 at 30 fps, per bitrate (kbit/s, 640×480) and pulse amplitude (${CODEC_CALIBRATION_SEEDS.length + CODEC_VALIDATION_SEEDS.length} seeds each):`,
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
        'noise share',
        'within tolerance',
        'HRV published',
      ],
      real,
    ),
    '',
  ].join('\n');
  return { markdown, headline };
}
