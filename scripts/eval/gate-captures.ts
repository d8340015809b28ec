// The captures the quality gate's evaluation runs on (gate-null.ts): pulse-less sets (phantom
// without pulse and pure noise, the ubfc2 backgrounds through the first-frame box and through the
// media path, the skin patches, the real-user null videos when null-videos.ts is there) and
// labelled sets (the ubfc2 faces through both paths, whole clips and 20–60 s parts; a phantom
// amplitude sweep). Each capture is analysed once: its evidence score, whether it was published,
// the confidence and the error of the chain's rate.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname } from 'node:path';
import type { Packet } from '../../packages/protocol/src/index.js';
import { buildRgbTrace, generatePhantom, traceFromRgb, type RgbTrace } from '../../packages/engine/src/index.js';
import { analyzeTraceWithInternals } from '../../packages/engine/src/estimators/analyze.js';
import { DATA_DIR, readManifest } from './common.js';
import { processVideo } from './ubfc-video.js';
import { cropPackets, subjectCrops } from './ubfc2.js';
import { patchTrace } from './skin-patches.js';
import { wallPackets, wallSources } from './wall-crops.js';
import { readFileSync } from 'node:fs';

export interface GateCapture {
  set: string;
  /** The recording (subject, clip, seed) the capture comes from: the unit left out together. */
  source: string;
  durationSec: number;
  evidence: number;
  published: boolean;
  /** Published heart-rate confidence (0 when not published). */
  confidence: number;
  /** Chain rate − reference, bpm (labelled sets; NaN otherwise). */
  errorBpm: number;
  /** Whole recording (not a part). */
  whole: boolean;
}

function measure(set: string, source: string, tr: RgbTrace, ref = NaN, whole = true): GateCapture {
  if (process.env.VITALS_EVAL_PROGRESS === '1') console.error(`gate: ${set} ${source}`);
  const a = analyzeTraceWithInternals(tr);
  const m = a.measurement;
  return {
    set,
    source,
    durationSec: m.durationSec,
    evidence: a.evidence?.score ?? -Infinity,
    published: m.quality.usable,
    confidence: m.cardiac.heartRate?.confidence ?? 0,
    errorBpm: (m.stats.internalHeartRateBpm ?? NaN) - ref,
    whole,
  };
}

/** [from, from + sec] s of a packet capture, re-timed to start at 0; null when the capture is shorter. */
function cut(ps: Packet[], fromSec: number, sec: number): Packet[] | null {
  const t = (p: Packet): number => ('tMicros' in p ? p.tMicros : NaN);
  const t0 = t(ps[0]) + fromSec * 1e6;
  const out = ps.filter((p) => t(p) >= t0 && t(p) <= t0 + sec * 1e6);
  if (!out.length || (t(out[out.length - 1]) - t(out[0])) / 1e6 < sec - 1) return null;
  return out.map((p) => ({ ...p, tMicros: t(p) - t0 }) as Packet);
}

/** The background channels of [from, from + sec] s of a trace as a plain RGB trace (null if shorter). */
function background(tr: RgbTrace, fromSec: number, sec: number): RgbTrace | null {
  if (!tr.bg) return null;
  const t0 = tr.tMicros[0] + fromSec * 1e6;
  const idx: number[] = [];
  for (let i = 0; i < tr.n; i++) if (tr.tMicros[i] >= t0 && tr.tMicros[i] <= t0 + sec * 1e6) idx.push(i);
  if (idx.length < 10 || (tr.tMicros[idx[idx.length - 1]] - tr.tMicros[idx[0]]) / 1e6 < sec - 1) return null;
  const pick = (a: Float64Array): number[] => idx.map((i) => a[i]);
  return traceFromRgb(pick(tr.tMicros), pick(tr.bg.r), pick(tr.bg.g), pick(tr.bg.b));
}

const PARTS: [number, number][] = [
  [20, 0],
  [20, 15],
  [30, 15],
  [45, 0],
  [60, 0],
];

/** Phantom captures: without pulse (face at four noise levels, drift, motion; pure noise) and an amplitude sweep. */
export function phantomCaptures(): { nulls: GateCapture[]; labelled: GateCapture[] } {
  const nulls: GateCapture[] = [];
  let seed = 7000;
  // 24 per length to 90 s (four of them pure noise), 6 at 120 and 300 s; the calibration used 150 others.
  for (const sec of [20, 30, 45, 60, 90, 120, 300]) {
    for (let k = 0; k < (sec > 90 ? 6 : 24); k++) {
      const o =
        k % 6 === 5
          ? { pureNoise: true }
          : {
              pulseAmplitude: 0,
              noiseStd: [1, 2, 4, 8][k % 4],
              illuminationDrift: [0, 0.03, 0.08][k % 3],
              motionPx: [0, 0.5, 1][(k >> 2) % 3],
            };
      const s = seed++;
      const set = k % 6 === 5 ? 'phantom, pure noise' : 'phantom, face without pulse';
      nulls.push(
        measure(set, `seed ${s}`, buildRgbTrace(generatePhantom({ durationSec: sec, ...o, seed: s }).packets)),
      );
    }
  }
  const labelled: GateCapture[] = [];
  seed = 8000;
  for (const amp of [0.001, 0.0015, 0.002, 0.003, 0.004, 0.006]) {
    for (const sec of [20, 30, 45, 60]) {
      for (const noiseStd of [2, 6]) {
        const s = seed++;
        const g = generatePhantom({
          durationSec: sec,
          heartRateBpm: 50 + ((s * 37) % 80),
          pulseAmplitude: amp,
          noiseStd,
          illuminationDrift: 0.03,
          motionPx: 0.5,
          seed: s,
        });
        labelled.push(measure('phantom with pulse', `seed ${s}`, buildRgbTrace(g.packets), g.truth.heartRateBpm));
      }
    }
  }
  return { nulls, labelled };
}

/** The ubfc2 recordings: faces (labelled) and backgrounds (nulls), both paths. */
export async function ubfc2Captures(): Promise<{ nulls: GateCapture[]; labelled: GateCapture[] }> {
  const nulls: GateCapture[] = [];
  const labelled: GateCapture[] = [];
  const set = readManifest().sets.find((s) => s.name === 'ubfc2');
  for (const item of set?.items ?? []) {
    if (!item.video) continue;
    const ref = item.referenceHeartRateBpm;
    const crops = await subjectCrops(item.video, item.id);
    const video = await processVideo(item.id, item.video);
    for (const [path, ps] of [
      ['media path', video.packets],
      ['first-frame box', [...cropPackets(crops.meta, crops.crops)] as Packet[]],
    ] as const) {
      if (!ps) continue;
      const tr = buildRgbTrace(ps);
      const bgSet = `ubfc2 background (${path})`;
      for (const sec of [20, 60]) {
        const b = background(tr, 0, sec);
        if (b) nulls.push(measure(bgSet, item.id, b, NaN, false));
      }
      const whole = background(tr, 0, (tr.tMicros[tr.n - 1] - tr.tMicros[0]) / 1e6);
      if (whole) nulls.push(measure(bgSet, item.id, whole));
      if (ref === undefined) continue; // held out: never compared with anything here
      const faceSet = `ubfc2 faces (${path})`;
      labelled.push(measure(faceSet, item.id, tr, ref));
      for (const [sec, from] of PARTS) {
        const c = cut(ps, from, sec);
        if (c) labelled.push(measure(faceSet, item.id, buildRgbTrace(c), ref, false));
      }
    }
  }
  return { nulls, labelled };
}

/**
 * The ubfc2 wall boxes (wall-crops.ts): whole crops of plain background from every ubfc2 video, so
 * the evidences that need the crop's pixels (the face quadrants' coherence) meet the same codec,
 * camera and light as the faces; cut like the backgrounds (20 s, 60 s, whole).
 */
export async function wallCaptures(): Promise<GateCapture[]> {
  const out: GateCapture[] = [];
  for (const src of wallSources()) {
    const boxes = await wallPackets(src.id, src.video);
    boxes.forEach((ps, k) => {
      const source = `${src.id} box ${k}`;
      for (const [sec, from] of [
        [20, 5],
        [60, 0],
      ] as const) {
        const c = cut(ps, from, sec);
        if (c) out.push(measure('ubfc2 wall boxes (crop path)', source, buildRgbTrace(c), NaN, false));
      }
      out.push(measure('ubfc2 wall boxes (crop path)', source, buildRgbTrace(ps)));
    });
  }
  return out;
}

/** The skin patches: a pulse the detectability test cannot find, so the gate must publish none. */
export async function patchCaptures(): Promise<GateCapture[]> {
  const out: GateCapture[] = [];
  const csv = readFileSync(join(DATA_DIR, 'skin-patches/index.csv'), 'utf8').trim().split('\n').slice(1);
  for (const line of csv) {
    const [file] = line.split(',');
    const tr = await patchTrace(file);
    out.push(measure('skin patches', file, traceFromRgb(tr.tMicros, tr.r, tr.g, tr.b)));
  }
  return out;
}

/** The real-user null videos (null-videos.ts, when present): still, moving, screen replay. */
export async function realUserCaptures(): Promise<GateCapture[]> {
  // Building them the first time costs about a minute of CPU per clip: VITALS_EVAL_SKIP_NULL_VIDEOS=1
  // leaves them out while iterating (the page then says which null sets it has).
  if (process.env.VITALS_EVAL_SKIP_NULL_VIDEOS === '1') return [];
  const file = join(dirname(fileURLToPath(import.meta.url)), 'null-videos.ts');
  if (!existsSync(file)) return [];
  const mod = (await import(pathToFileURL(file).href)) as {
    nullVideoSets: () => Promise<{ set: string; items: { id: string; packets: Packet[] }[] }[]>;
  };
  const out: GateCapture[] = [];
  for (const s of await mod.nullVideoSets())
    for (const it of s.items) out.push(measure(`real-user null: ${s.set}`, it.id, buildRgbTrace(it.packets)));
  return out;
}
