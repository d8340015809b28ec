// Eval section: the real-user null videos (null-videos.ts) through the engine's offline estimator,
// as a batch job measures them. Per set: how many the quality gate publishes a heart rate for, and
// the capture statistics the gate decides on (stats.anchorShare, the median window SQI). For the
// screen-replay set, whether the subject's pulse survives the replay: detectability of the chain's
// pulse signal at each clip's own contact-PPG rate (detectability.ts), beside the same seconds of
// the original video (the ubfc2 section's face crops).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Packet } from '../../packages/protocol/src/index.js';
import { estimateOffline, type EngineMeasurement } from '../../packages/engine/src/index.js';
import { DATA_DIR, fmt, table } from './common.js';
import { detectabilityRow, detectOutcomes, summarize, DETECTABILITY_HEAD, type DetectItem } from './detectability.js';
import { nullSources, nullVideoSets, rejectedNulls, SCREEN_SEC, SCREEN_START_SEC } from './null-videos.js';
import { contactReference, parseGroundTruth } from './ubfc2-hrv.js';
import { cropPackets, subjectCrops } from './ubfc2.js';
import type { HeadlineRow, SectionOutput } from '../headline.js';

const published = (m: EngineMeasurement): boolean => m.cardiac.heartRate !== null && m.cardiac.heartRate !== undefined;

function spread(v: number[]): string {
  const f = v.filter((x) => Number.isFinite(x));
  if (!f.length) return '–';
  const mean = f.reduce((a, b) => a + b, 0) / f.length;
  return `${fmt(mean, 3)} (max ${fmt(Math.max(...f), 3)})`;
}

/** The contact-PPG heart rate over [from, from + sec] s of the subject's ground truth. */
function windowReference(groundTruth: string, from: number, sec: number): number {
  const gt = parseGroundTruth(readFileSync(join(DATA_DIR, groundTruth), 'utf8'));
  const keep = gt.tSec.map((t) => t >= from && t <= from + sec);
  const cut = <T>(a: T[]): T[] => a.filter((_, i) => keep[i]);
  return contactReference({ ppg: cut(gt.ppg), oximeterHr: cut(gt.oximeterHr), tSec: cut(gt.tSec) }).beatHrBpm;
}

/**
 * The same seconds of the original video, as the ubfc2 section's face crops (first-frame box, cached
 * by ubfc2.ts; far cheaper than tracking the face again), re-timed to start at 0.
 */
async function originalWindow(id: string, video: string): Promise<Packet[]> {
  const { meta, crops } = await subjectCrops(video, id);
  const from = SCREEN_START_SEC * 1e6;
  const to = from + SCREEN_SEC * 1e6;
  const out: Packet[] = [];
  for (const p of cropPackets(meta, crops))
    if (p.tMicros >= from && p.tMicros < to) out.push({ ...p, tMicros: p.tMicros - from });
  return out;
}

export async function run(): Promise<SectionOutput> {
  const sets = await nullVideoSets();
  const summary: (string | number)[][] = [];
  const perClip: (string | number)[][] = [];
  let nullsPublished = 0;
  let nullsTotal = 0;
  let screenPublished = 0;
  let screenTotal = 0;
  const replay: DetectItem[] = [];
  const original: DetectItem[] = [];
  const refs = new Map(nullSources().labelled.map((i) => [i.id, i]));
  for (const s of sets) {
    const ms = s.items.map((it) => ({ it, m: estimateOffline(it.packets) }));
    const pub = ms.filter(({ m }) => published(m)).length;
    const rejected = rejectedNulls.get(s.set) ?? [];
    summary.push([
      s.set,
      s.items.length + rejected.length,
      rejected.length,
      `${pub}/${s.items.length}`,
      spread(ms.map(({ m }) => m.stats.anchorShare ?? NaN)),
      spread(ms.map(({ m }) => m.stats.medianSqi)),
      ms.map(({ m }) => m.quality.level).join(' '),
    ]);
    for (const { it, m } of ms)
      perClip.push([
        s.set,
        it.id,
        it.durationSec,
        fmt(m.stats.anchorShare, 3),
        fmt(m.stats.medianSqi, 2),
        m.quality.level,
        fmt(m.stats.internalHeartRateBpm),
        published(m) ? fmt(m.cardiac.heartRate!.value) : '–',
      ]);
    if (s.set === 'screen') {
      screenPublished += pub;
      screenTotal += s.items.length;
      for (const { it, m } of ms) {
        const item = refs.get(it.id);
        if (!item?.groundTruth) continue;
        const referenceBpm = windowReference(item.groundTruth, SCREEN_START_SEC, SCREEN_SEC);
        replay.push({ pulse: m.raw.ppgSignal, sampleRateHz: m.raw.sampleRateHz, referenceBpm });
        const mo = estimateOffline(await originalWindow(it.id, item.video!));
        original.push({ pulse: mo.raw.ppgSignal, sampleRateHz: mo.raw.sampleRateHz, referenceBpm });
      }
    } else {
      nullsPublished += pub;
      nullsTotal += s.items.length + rejected.length;
    }
  }
  const dReplay = replay.length ? summarize(detectOutcomes(replay)) : null;
  const dOrig = original.length ? summarize(detectOutcomes(original)) : null;
  const survives = dReplay !== null && dReplay.pValue < 0.05;
  const headline: HeadlineRow[] = [
    {
      area: 'Real-user null videos',
      figure: 'heart rates published on pulse-less videos through the video path (still photo, moving photo)',
      value: `${nullsPublished}/${nullsTotal}`,
      target: '0',
      met: nullsPublished === 0,
      reference: 'ffmpeg-made clips from ubfc2 frames, not used for calibration',
      command: '`npm run eval`',
    },
    {
      area: 'Real-user null videos',
      figure: 'heart rates published on screen replays (45 kbit/s) of labelled ubfc2 videos',
      value: `${screenPublished}/${screenTotal}; pulse ${survives ? 'survives' : 'not detectable'} (p ${dReplay ? fmt(dReplay.pValue, 3) : '–'})`,
      target: '–',
      met: null,
      reference: 'spoof resistance, not pulse absence: the replayed pulse is real',
      command: '`npm run eval`',
    },
  ];
  const detectRows = [
    ...(dReplay ? [detectabilityRow('screen replay (45 kbit/s)', dReplay)] : []),
    ...(dOrig ? [detectabilityRow('same seconds of the original video (ubfc2 section crops)', dOrig)] : []),
  ];
  const markdown = [
    '## Real-user null videos (media → engine)',
    '',
    'Captures a person produces without a live pulse, made at eval time with ffmpeg from the ubfc2 recordings (never stored in the repository; recipes and cache in scripts/eval/null-videos.ts, `.eval-cache/null-videos/`) and measured exactly as a batch video job: `videoToPackets` then `estimateOffline`. A heart rate published on the still or moving sets is a false publication. The sets:',
    '',
    ...sets.map((s) => `- **${s.set}** (${s.items.length} clips): ${s.description}`),
    '',
    table(
      [
        'set',
        'clips',
        'refused by the video path',
        'heart rate published',
        'anchor share: mean (max)',
        'median window SQI: mean (max)',
        'quality levels',
      ],
      summary,
    ),
    '',
    `Does the pulse survive the replay? Detectability of the chain's pulse signal at each clip's own heart rate (60 / mean beat interval of the contact PPG over the replayed ${SCREEN_SEC} s), against its rank at the other subjects' rates (method: the skin-patch section). ${
      survives
        ? '**The pulse survives the replay** (p < 0.05): this set measures spoof resistance, not pulse absence; a published heart rate here is a replayed real pulse, and the engine has no liveness test to refuse it.'
        : `At this n the replayed pulse is not detectably there (p ≥ 0.05)${
            dOrig && dOrig.pValue >= 0.05
              ? `, but neither is it in the same ${SCREEN_SEC} s of the original videos (p ${fmt(dOrig.pValue, 3)}): with six clips of 42 s the test is too weak to tell whether the replay removed the pulse`
              : ''
          }. The set measures spoof resistance rather than pulse absence: a better screen or camera could carry the pulse, and the engine has no liveness test.`
    }`,
    '',
    detectRows.length ? table(DETECTABILITY_HEAD, detectRows) : 'No labelled replay clips.',
    '',
    'Per clip:',
    '',
    table(
      ['set', 'source', 'length (s)', 'anchor share', 'median SQI', 'quality', 'internal HR', 'published HR'],
      perClip,
    ),
    '',
  ].join('\n');
  return { markdown, headline };
}
