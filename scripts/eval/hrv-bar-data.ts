// Data for the camera-HRV bar (hrv-bar.ts): phantom captures with known RR series at graded pulse
// strength, frame rate and H.264 bitrate, each analysed by the chain (internal HRV whatever the
// gate says, the published HRV, the beat-timing noise) and scored by its pulse SNR. Outcomes are
// cached in .eval-cache/hrv-bar/ (generating the phantom is the slow part).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { buildRgbTrace, generatePhantom } from '../../packages/engine/src/index.js';
import { analyzeTraceWithInternals } from '../../packages/engine/src/estimators/analyze.js';
import { bandBins } from '../../packages/engine/src/dsp/spectrum.js';
import { cachePath } from './common.js';
import { welch } from './detectability.js';
import { codecRoundTrip } from './phantom-codec.js';

/** Bump when the engine or the conditions change, so cached outcomes are recomputed. */
export const HRV_BAR_VERSION = 'h2';
export const PHANTOM_SEC = 60;
/** Pulse amplitudes (relative, green): 1 % is the default phantom and the literature's typical skin pulse. */
export const AMPLITUDES = [0.01, 0.02, 0.04];
export const FRAME_RATES = [15, 20, 25, 30, 60];
export const BITRATES_KBPS = [150, 500, 2000];
export const CODEC_AMPLITUDES = [0.02, 0.04];
const SEEDS = [1, 2];
/** Heart rates per seed, so captures differ in rate as well as in noise. */
const HR_OF_SEED: Record<number, number> = { 1: 64, 2: 88 };

export interface Condition {
  fps: number;
  amplitude: number;
  /** H.264 bitrate, kbit/s; null: the crops go to the engine as rendered. */
  kbps: number | null;
  seed: number;
}

export interface Outcome extends Condition {
  snrDb: number;
  truthRmssd: number;
  truthSdnn: number;
  /** The chain's HRV from its own beats, whatever the gate said (NaN when none). */
  rmssd: number;
  sdnn: number;
  timingNoiseMs: number;
  level: string;
  hrPublished: boolean;
  hrvPublished: boolean;
}

/**
 * Pulse SNR (dB) after de Haan & Jeanne, "Robust pulse rate from chrominance-based rPPG", IEEE TBME
 * 60(10), 2013, restricted to the analysis band (42–150 bpm): power within ±0.1 Hz of the true rate
 * over the rest of the band, leaving out ±0.1 Hz around the first harmonic (which is in the band
 * below 75 bpm and not above, so counting it would make the figure depend on the rate), from a
 * Welch spectrum of the chain's pulse signal.
 */
export function pulseSnrDb(pulse: ArrayLike<number>, sampleRateHz: number, hrBpm: number): number {
  const s = welch(pulse, sampleRateHz);
  const [lo, hi] = bandBins(s, 0.7, 2.5);
  const f0 = hrBpm / 60;
  let sig = 0;
  let rest = 0;
  for (let k = lo; k <= hi; k++) {
    const f = k * s.binHz;
    if (Math.abs(f - f0) <= 0.1) sig += s.power[k];
    else if (Math.abs(f - 2 * f0) > 0.1) rest += s.power[k];
  }
  return 10 * Math.log10(sig / rest);
}

async function measure(c: Condition): Promise<Outcome> {
  const ph = generatePhantom({
    durationSec: PHANTOM_SEC,
    fps: c.fps,
    pulseAmplitude: c.amplitude,
    heartRateBpm: HR_OF_SEED[c.seed] ?? 72,
    seed: 500 + c.seed,
  });
  const packets = c.kbps === null ? ph.packets : await codecRoundTrip(ph.packets, c.fps, c.kbps);
  const { measurement: m, vitals } = analyzeTraceWithInternals(buildRgbTrace(packets));
  const h = vitals?.hrv ?? null;
  return {
    ...c,
    snrDb: pulseSnrDb(m.raw.ppgSignal, m.raw.sampleRateHz, ph.truth.heartRateBpm),
    truthRmssd: ph.truth.rmssdMs,
    truthSdnn: ph.truth.sdnnMs,
    rmssd: h?.rmssdMs ?? NaN,
    sdnn: h?.sdnnMs ?? NaN,
    timingNoiseMs: vitals?.timingNoiseMs ?? NaN,
    level: m.quality.level,
    hrPublished: m.cardiac.heartRate !== null,
    hrvPublished: m.hrv !== null,
  };
}

/**
 * Every frame rate × amplitude once (seed 1), 30 fps twice (seeds 1 and 2), and the codec at
 * 30 fps once per bitrate × amplitude: a phantom capture costs 0.5–2 min on the shared 2-core
 * machine, the H.264 ones the most.
 */
export function conditions(): { grid: Condition[]; codec: Condition[] } {
  const grid: Condition[] = [];
  for (const fps of FRAME_RATES)
    for (const amplitude of AMPLITUDES)
      for (const seed of fps === 30 ? SEEDS : SEEDS.slice(0, 1)) grid.push({ fps, amplitude, kbps: null, seed });
  const codec: Condition[] = [];
  for (const kbps of BITRATES_KBPS)
    for (const amplitude of CODEC_AMPLITUDES) codec.push({ fps: 30, amplitude, kbps, seed: SEEDS[0] });
  return { grid, codec };
}

const keyOf = (c: Condition): string => `${c.fps}/${c.amplitude}/${c.kbps ?? 'raw'}/${c.seed}`;

/** Every condition's outcome, from the cache where present (written after each new one). */
export async function outcomes(list: Condition[]): Promise<Outcome[]> {
  const path = cachePath('hrv-bar', `${HRV_BAR_VERSION}.json`);
  const cache: Record<string, Outcome> = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
  const out: Outcome[] = [];
  for (const c of list) {
    const k = keyOf(c);
    if (!cache[k]) {
      cache[k] = await measure(c);
      writeFileSync(path, JSON.stringify(cache));
    }
    out.push(cache[k]);
  }
  return out;
}

/** Within the tolerance: |error| ≤ max(10 ms, 20 % of the truth). */
export const TOL_MS = 10;
export const TOL_SHARE = 0.2;
export const withinTol = (est: number, truth: number): boolean =>
  Number.isFinite(est) && Math.abs(est - truth) <= Math.max(TOL_MS, TOL_SHARE * truth);
/** Both RMSSD and SDNN within the tolerance. */
export const hrvOk = (o: Outcome): boolean => withinTol(o.rmssd, o.truthRmssd) && withinTol(o.sdnn, o.truthSdnn);
