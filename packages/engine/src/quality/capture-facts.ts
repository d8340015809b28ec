// What the quality reasons (reasons.ts) are decided on, measured from the capture itself: the
// packets' timeline (face lost, frame drops), the face crops' exposure (trace/exposure.ts), the
// tracker's box motion (type-3 telemetry), a flicker line in the face's luminance, and what the
// server knows of the source video (bitrate, face presence). Pure: typed arrays, no Node APIs.
import { medianIntervalMicros, resampleUniform } from '../dsp/resample.js';
import { median } from '../dsp/stats.js';
import { bandBins, nextPow2, powerInBins, powerSpectrum } from '../dsp/spectrum.js';
import type { RgbTrace } from '../trace/rgb-trace.js';

/** What the server knows of the video the packets came from (a video job); absent for live captures. */
export interface CaptureSource {
  /** Encoded bits per pixel per frame: bitrate / (width · height · frames per second). */
  bitsPerPixel?: number;
  /** Share of decoded frames in which a face was followed, 0..1. */
  facePresence?: number;
}

export interface CaptureFacts {
  durationSec: number;
  /**
   * How long the whole capture lasted, face or no face: from its start (the first crop's time) to
   * the last crop, or the followed span over the source's face presence when the source says it and
   * that is longer (Infinity for a presence of 0: packets exist only where a face was, so none say
   * how long there was none).
   */
  captureSec?: number;
  /** Share of the capture without a followed face, 0..1 (gaps over LONG_GAP_SEC; the source's presence). */
  faceLostShare: number;
  /** Frames per second that arrived while the face was followed. */
  effectiveFps: number;
  /** Share of frames missing in short gaps (dropped by the camera or the browser), 0..1. */
  dropShare: number;
  /** Share of telemetry samples with the face moving faster than MOVING_SCORE; null without telemetry. */
  movingShare: number | null;
  /** Median face luma, 0..255; null when the trace has no crops (RGB means only). */
  faceLuma: number | null;
  /** Median share of clipped face pixels, 0..1; null like faceLuma. */
  clippedShare: number | null;
  /** The strongest narrow line in the face luminance away from the heart rate; null when not measured. */
  flicker: { freqHz: number; share: number; amplitude: number } | null;
  bitsPerPixel: number | null;
}

/** A gap in the packets longer than this is the face lost (the tracker sends nothing then), not a drop. */
export const LONG_GAP_SEC = 0.5;
/** Tracker motion score (1 = half the face width per second) above which the face counts as moving. */
export const MOVING_SCORE = 0.2;
/**
 * Flicker search band: above every heart rate (240 bpm) and its body motion, below the Nyquist
 * rate. Mains lighting flickers at 100 or 120 Hz, which a camera aliases to |100 − k·fps|: 10 Hz at
 * 30 fps, 5 Hz for 120 Hz at 25 fps, 4 Hz for 100 Hz at 24 fps. A line that aliases into the pulse
 * band cannot be told from a pulse or a rhythmic head movement by the luminance alone (on a shaken
 * ubfc2 clip the face's luminance carried a line at twice the shaking rate), so it is not searched.
 */
const FLICKER_LOW_HZ = 4;
/** Half-width of the line: a lamp's flicker is a steady tone, narrower than any pulse over a capture. */
const LINE_HALF_WIDTH_HZ = 0.1;
/** The heart rate's harmonics are kept out of the search (the pulse is in the luminance too). */
const PULSE_GUARD_HZ = 0.2;

function timeline(trace: RgbTrace): { durationSec: number; lostSec: number; dropped: number; fps: number } {
  const n = trace.n;
  if (n < 2) return { durationSec: 0, lostSec: 0, dropped: 0, fps: 0 };
  const t = trace.tMicros;
  const dt = medianIntervalMicros(t, 0, n);
  let lost = 0;
  let dropped = 0;
  for (let i = 1; i < n; i++) {
    const d = t[i] - t[i - 1];
    if (d > LONG_GAP_SEC * 1e6) lost += d - dt;
    else if (d > 1.5 * dt) dropped += Math.round(d / dt) - 1;
  }
  const durationSec = (t[n - 1] - t[0]) / 1e6;
  const followedSec = Math.max(1e-6, durationSec - lost / 1e6);
  return { durationSec, lostSec: lost / 1e6, dropped, fps: (n - 1) / followedSec };
}

function movingShare(trace: RgbTrace): number | null {
  const tel = trace.telemetry;
  if (tel.n < 8) return null;
  let moving = 0;
  for (let i = 0; i < tel.n; i++) if (tel.motion[i] > MOVING_SCORE) moving++;
  return moving / tel.n;
}

/**
 * The strongest narrow line of the face's relative luminance between 4 Hz and 0.45·fs, outside
 * ±0.2 Hz of the heart rate's harmonics: `share` is the line's part (±0.1 Hz) of the power in
 * that band, `amplitude` its RMS relative to the mean luminance.
 */
export function luminanceLine(
  trace: RgbTrace,
  sampleRateHz: number,
  heartRateBpm: number | null,
): { freqHz: number; share: number; amplitude: number } | null {
  const n = trace.n;
  const fs = sampleRateHz;
  if (n < 64 || !(0.45 * fs > FLICKER_LOW_HZ + 1)) return null;
  const src = trace.exposure ? trace.exposure.luma : lumaOfMeans(trace);
  const u = resampleUniform(trace.tMicros, [src], fs, { to: n }).channels[0];
  let m = 0;
  for (let i = 0; i < u.length; i++) m += u[i];
  m /= u.length;
  if (!(m > 0)) return null;
  for (let i = 0; i < u.length; i++) u[i] = u[i] / m - 1;
  const s = powerSpectrum(u, fs, nextPow2(u.length));
  const [lo, hi] = bandBins(s, FLICKER_LOW_HZ, 0.45 * fs);
  if (hi - lo < 8) return null;
  const hrHz = heartRateBpm !== null && Number.isFinite(heartRateBpm) ? heartRateBpm / 60 : NaN;
  const guarded = (f: number): boolean => {
    for (let h = 2; h <= 4; h++) if (Math.abs(f - h * hrHz) < PULSE_GUARD_HZ) return true;
    return false;
  };
  let best = -1;
  for (let k = lo; k <= hi; k++) {
    if (guarded(k * s.binHz)) continue;
    if (best < 0 || s.power[k] > s.power[best]) best = k;
  }
  if (best < 0) return null;
  const w = Math.max(1, Math.round(LINE_HALF_WIDTH_HZ / s.binHz));
  const line = powerInBins(s, Math.max(lo, best - w), Math.min(hi, best + w));
  const total = powerInBins(s, lo, hi);
  // Parseval over nfft bins with the Hann taper (mean square 3/8), one side of the spectrum holding
  // half the power: mean square = 16·line / (3·nfft·n).
  const amplitude = Math.sqrt((16 * line) / (3 * s.nfft * u.length));
  return { freqHz: best * s.binHz, share: total > 0 ? line / total : 0, amplitude };
}

function lumaOfMeans(trace: RgbTrace): Float64Array {
  const y = new Float64Array(trace.n);
  for (let i = 0; i < trace.n; i++) y[i] = 0.299 * trace.r[i] + 0.587 * trace.g[i] + 0.114 * trace.b[i];
  return y;
}

/** Everything the reasons are decided on, from the trace, the engine's own statistics and the source. */
export function captureFacts(
  trace: RgbTrace,
  stats: { sampleRateHz: number; internalHeartRateBpm: number | null },
  source: CaptureSource = {},
): CaptureFacts {
  const tl = timeline(trace);
  // Packets are timed from the capture's start (the spec: from the session's start) and crops exist
  // only where the face was followed, so the time before the first crop is time without a face, as
  // a gap between crops is (the time after the last one is not known: a session may stay open).
  const first = trace.n > 0 ? trace.tMicros[0] / 1e6 : 0;
  const lead = first > LONG_GAP_SEC ? first : 0;
  const total = tl.durationSec + (tl.fps > 0 ? 1 / tl.fps : 0) + lead;
  let faceLostShare = total > 0 ? (tl.lostSec + lead) / total : 0;
  let captureSec = tl.durationSec + lead;
  if (source.facePresence !== undefined && Number.isFinite(source.facePresence)) {
    const presence = Math.min(1, Math.max(0, source.facePresence));
    faceLostShare = Math.max(faceLostShare, 1 - presence);
    captureSec = presence > 0 ? Math.max(captureSec, tl.durationSec / presence) : Infinity;
  }
  const ex = trace.exposure;
  const n = trace.n;
  return {
    durationSec: tl.durationSec,
    captureSec,
    faceLostShare,
    effectiveFps: tl.fps,
    dropShare: n > 0 ? tl.dropped / (n + tl.dropped) : 0,
    movingShare: movingShare(trace),
    faceLuma: ex && n ? median(ex.luma.subarray(0, n)) : null,
    clippedShare: ex && n ? median(ex.clipped.subarray(0, n)) : null,
    flicker: luminanceLine(trace, stats.sampleRateHz, stats.internalHeartRateBpm),
    bitsPerPixel:
      source.bitsPerPixel !== undefined && Number.isFinite(source.bitsPerPixel) ? source.bitsPerPixel : null,
  };
}
