// Quality reasons (issue 17; docs/engine.md, "Quality reasons"): why a capture is not better, each
// a stable code with a hint a person can act on (@vitals/protocol QUALITY_REASON_HINTS) and the
// measured value behind it. Decided on the capture's facts (capture-facts.ts) and the quality
// gate's verdict, which this module takes as an input and never changes. Pure: no Node APIs.
import {
  QUALITY_REASON_CODES,
  QUALITY_REASON_HINTS,
  type QualityReason,
  type QualityReasonCode,
} from '@vitals/protocol';
import { roundTo } from '../dsp/stats.js';
import type { RgbTrace } from '../trace/rgb-trace.js';
import { captureFacts, type CaptureFacts, type CaptureSource } from './capture-facts.js';

/** The gate's verdict on the capture (quality.ts decides it; the reasons only read it). */
export interface GateVerdict {
  /** A heart rate was published. */
  published: boolean;
  /**
   * HRV and the stress index were withheld although the heart rate was published (the HRV rule,
   * estimators/hrv-rule.ts: a `good` capture of ≥ 20 s at ≥ 28 fps whose beat timing is mostly
   * signal). Absent: false.
   */
  hrvWithheld?: boolean;
  level: 'good' | 'fair' | 'poor';
}

/** Thresholds (docs/engine.md, "Quality reasons", says how each was chosen). */
export const REASON_THRESHOLDS = Object.freeze({
  /** face_lost: share of the capture without a followed face. */
  faceLostShare: 0.1,
  /** motion: share of telemetry samples with the face moving (capture-facts.ts MOVING_SCORE). */
  movingShare: 0.4,
  /** low_light: median face luma, 8-bit. */
  minFaceLuma: 50,
  /** overexposed: median share of clipped face pixels. */
  clippedShare: 0.05,
  /** flicker: the line's share of the luminance power in its band, and its RMS relative to the mean. */
  flickerShare: 0.25,
  flickerAmplitude: 0.002,
  /** low_frame_rate: frames per second that arrived (the spec's video minimum), and the dropped share. */
  minFps: 20,
  dropShare: 0.15,
  /** compression: bits per pixel per frame; always below the first, when nothing was published below the second. */
  severeBitsPerPixel: 0.004,
  weakBitsPerPixel: 0.012,
  /** too_short: always under the first (nothing is ever published); when nothing was published, under the second. */
  minDurationSec: 10,
  advisedDurationSec: 30,
});

const T = REASON_THRESHOLDS;

/** The reasons a capture's facts give, in the stable order of QUALITY_REASON_CODES. */
export function reasonsFromFacts(f: CaptureFacts, verdict: GateVerdict): QualityReason[] {
  const found = new Map<QualityReasonCode, number | undefined>();
  if (f.faceLostShare >= T.faceLostShare) found.set('face_lost', roundTo(f.faceLostShare, 2));
  if (f.movingShare !== null && f.movingShare >= T.movingShare) found.set('motion', roundTo(f.movingShare, 2));
  if (f.faceLuma !== null && f.faceLuma < T.minFaceLuma) found.set('low_light', roundTo(f.faceLuma, 1));
  if (f.clippedShare !== null && f.clippedShare >= T.clippedShare) found.set('overexposed', roundTo(f.clippedShare, 2));
  if (f.flicker && f.flicker.share >= T.flickerShare && f.flicker.amplitude >= T.flickerAmplitude)
    found.set('flicker', roundTo(f.flicker.freqHz, 2));
  if (f.effectiveFps > 0 && (f.effectiveFps < T.minFps || f.dropShare >= T.dropShare))
    found.set('low_frame_rate', roundTo(f.effectiveFps, 1));
  const bpp = f.bitsPerPixel;
  if (bpp !== null && (bpp < T.severeBitsPerPixel || (!verdict.published && bpp < T.weakBitsPerPixel)))
    found.set('compression', roundTo(bpp, 4));
  // The capture's own length, not the followed face's: a minute in which the face was lost for fifty
  // seconds needs the face kept in view (face_lost), not a longer recording.
  const captureSec = f.captureSec ?? f.durationSec;
  if (captureSec < T.minDurationSec || (!verdict.published && captureSec < T.advisedDurationSec))
    found.set('too_short', roundTo(captureSec, 1));
  // Withheld with nothing else to blame: the signal itself carried no pulse.
  if (!verdict.published && found.size === 0) found.set('no_pulse', undefined);
  // The rate was published but the beats were not clean enough for HRV and stress: say so, whatever
  // else is named (the other reasons say what degraded the capture; this one, what it cost).
  if (verdict.published && verdict.hrvWithheld) found.set('hrv_withheld', undefined);
  const out: QualityReason[] = [];
  for (const code of QUALITY_REASON_CODES) {
    if (!found.has(code)) continue;
    const value = found.get(code);
    out.push(
      value === undefined
        ? { code, hint: QUALITY_REASON_HINTS[code] }
        : { code, hint: QUALITY_REASON_HINTS[code], value },
    );
  }
  return out;
}

/** The reasons of one analysed capture: the one call the chain makes (estimators/analyze.ts). */
export function qualityReasons(
  trace: RgbTrace,
  m: {
    quality: { level: GateVerdict['level']; usable: boolean };
    cardiac: { heartRate: unknown };
    hrv: unknown;
    stats: { sampleRateHz: number; internalHeartRateBpm: number | null };
  },
  source?: CaptureSource,
): QualityReason[] {
  const published = m.quality.usable && m.cardiac.heartRate !== null;
  const verdict: GateVerdict = { published, level: m.quality.level, hrvWithheld: published && m.hrv === null };
  return reasonsFromFacts(captureFacts(trace, m.stats, source), verdict);
}
