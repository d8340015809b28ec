// Data for the camera-HRV bar (hrv-bar.ts): phantom captures with known RR series at graded pulse
// strength, frame rate and H.264 bitrate, each analysed by the chain (internal HRV whatever the
// gate says, the published HRV, the beat-timing noise) and scored by its pulse SNR. Outcomes are
// cached in .eval-cache/hrv-bar/<version>.json (the H.264 round trips are the slow part).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { buildRgbTrace, generatePhantom } from '../../packages/engine/src/index.js';
import { analyzeTraceWithInternals } from '../../packages/engine/src/estimators/analyze.js';
import { hrvEligible, hrvPublishable } from '../../packages/engine/src/estimators/hrv-rule.js';
import type { QualityLevel } from '../../packages/engine/src/types.js';
import { bandBins } from '../../packages/engine/src/dsp/spectrum.js';
import { cachePath } from './common.js';
import { welch } from './detectability.js';
import { codecRoundTrip } from './phantom-codec.js';

/** Bump when the engine or the conditions change, so cached outcomes are recomputed. */
/**
 * h6: the H.264 captures made reproducibly (phantom-codec.ts; h4's differed between runs and
 * machines) and the engine's period-doubling test (rate/capture-rate.ts). h7: beats timed on the
 * beat-timing pulse (pulse/background-reference.ts beatTimingPulse), seeds 201–206 in the
 * calibration and fresh validation seeds. Outcomes are cached.
 */
export const HRV_BAR_VERSION = 'h7';
export const PHANTOM_SEC = 60;
/** Pulse amplitudes (relative, green): 1 % is the default phantom and the literature's typical skin pulse. */
export const AMPLITUDES = [0.01, 0.015, 0.02, 0.03, 0.04];
export const FRAME_RATES = [15, 20, 25, 30, 60];
export const BITRATES_KBPS = [150, 500, 2000];
export const CODEC_AMPLITUDES = [0.02, 0.04];
/**
 * Seeds: the calibration set chooses the rule's thresholds (hrv-bar.ts `calibratedRule`), the
 * validation set (fresh seeds, the same conditions) judges them. Seeds 101–106 were a first
 * validation set; the timing-noise share alone, chosen on 1–6, published 4 of 45 of their HRVs
 * outside the tolerance, so they joined the calibration and 201–206 were the second. Three of
 * their published HRVs were outside the tolerance; seed 203's led to the beat-timing pulse
 * (pulse/background-reference.ts beatTimingPulse), so 201–206 (and H.264 seeds 2 and 102) joined
 * the calibration and 301–306 (H.264: 3 and 103), never analysed before, are the validation. The
 * H.264 captures cost 0.5–1.5 min each on the shared machine, so they have fewer seeds.
 */
export const CALIBRATION_SEEDS = [1, 2, 3, 4, 5, 6, 101, 102, 103, 104, 105, 106, 201, 202, 203, 204, 205, 206];
export const VALIDATION_SEEDS = [301, 302, 303, 304, 305, 306];
/** Seen before this validation set (the second validation set); reported apart in docs/accuracy.md. */
export const SEEN_VALIDATION_SEEDS = [201, 202, 203, 204, 205, 206];
export const CODEC_CALIBRATION_SEEDS = [1, 101, 2, 102];
export const CODEC_VALIDATION_SEEDS = [3, 103];
export const isCalibration = (o: { seed: number; kbps: number | null }): boolean =>
  (o.kbps === null ? CALIBRATION_SEEDS : CODEC_CALIBRATION_SEEDS).includes(o.seed);

/**
 * The heart's rhythm per seed, spread so that captures differ in rate (55–104 bpm), respiratory
 * sinus arrhythmia (30–90 ms peak to peak) and other beat-to-beat jitter (10–35 ms SD), hence in
 * true RMSSD (about 15–45 ms, the range of the ubfc2 contact references, 10–38 ms).
 */
export function rhythmOf(seed: number): { heartRateBpm: number; rsaMs: number; rrJitterMs: number } {
  return { heartRateBpm: 55 + ((seed * 29) % 50), rsaMs: 30 + ((seed * 17) % 61), rrJitterMs: 10 + ((seed * 13) % 26) };
}

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
  nnCount: number;
  acceptedFraction: number;
  durationSec: number;
  level: QualityLevel;
  hrPublished: boolean;
  /** Every HRV condition but the timing-noise and frame-rate ones holds (hrv-rule.ts `hrvEligible`). */
  eligible: boolean;
}

/**
 * The engine's rule (hrv-rule.ts `hrvPublishable`) on an outcome's internals, the same function the
 * measurement uses (so a rule change needs no new captures). The phantom's frames are evenly spaced
 * (the codec keeps their timestamps), so its sample rate is the condition's frame rate.
 */
export function publishable(o: Outcome): boolean {
  const hrv = Number.isFinite(o.rmssd)
    ? {
        rmssdMs: o.rmssd,
        sdnnMs: o.sdnn,
        pnn50Pct: 0,
        meanRrMs: 0,
        nnCount: o.nnCount,
        pairCount: 0,
        acceptedFraction: o.acceptedFraction,
      }
    : null;
  return hrvPublishable({ hrv, timingNoiseMs: o.timingNoiseMs }, o.level, o.durationSec, o.fps);
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
    ...rhythmOf(c.seed),
    seed: 700 + c.seed,
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
    nnCount: h?.nnCount ?? 0,
    acceptedFraction: h?.acceptedFraction ?? 0,
    durationSec: m.durationSec,
    level: m.quality.level,
    hrPublished: m.cardiac.heartRate !== null,
    eligible: vitals !== null && hrvEligible(vitals, m.quality.level, m.durationSec),
  };
}

/** Every frame rate × amplitude × seed as rendered; the codec at 30 fps per bitrate × amplitude × seed. */
export function conditions(): { grid: Condition[]; codec: Condition[] } {
  const grid: Condition[] = [];
  for (const seed of [...CALIBRATION_SEEDS, ...VALIDATION_SEEDS])
    for (const fps of FRAME_RATES) for (const amplitude of AMPLITUDES) grid.push({ fps, amplitude, kbps: null, seed });
  const codec: Condition[] = [];
  for (const seed of [...CODEC_CALIBRATION_SEEDS, ...CODEC_VALIDATION_SEEDS])
    for (const kbps of BITRATES_KBPS)
      for (const amplitude of CODEC_AMPLITUDES) codec.push({ fps: 30, amplitude, kbps, seed });
  return { grid, codec };
}

const keyOf = (c: Condition): string => `${c.fps}/${c.amplitude}/${c.kbps ?? 'raw'}/${c.seed}`;

/**
 * Every condition's outcome, from the cache where present (written after each new one). `part`
 * names the cache file, so the rendered and the H.264 captures can be built by two processes.
 */
export async function outcomes(list: Condition[], part: string): Promise<Outcome[]> {
  const path = cachePath('hrv-bar', `${HRV_BAR_VERSION}-${part}.json`);
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
