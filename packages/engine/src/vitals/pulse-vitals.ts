// Pulse → beats → RR → HRV, stress and breathing rate; shared by the trace chain and the
// waveform → vitals stage so both give the same answers for the same pulse. Methods and
// citations are in the files this composes (peaks.ts, rr-intervals.ts, hrv.ts, stress.ts,
// breathing.ts).
import { bandPassZeroPhase, lowPassZeroPhase } from '../dsp/butterworth.js';
import { detectBeats, type Beats } from '../beats/peaks.js';
import { rrIntervals, type RrSeries } from '../beats/rr-intervals.js';
import { timingNoiseMs } from '../beats/timing-noise.js';
import { timeDomainHrv, type HrvResult } from './hrv.js';
import { baevskyStressIndex } from './stress.js';
import {
  fuseBreathing,
  interpolateSeries,
  respSource,
  RESP_BAND_PULSE,
  RESP_BAND_WAVEFORM,
  RESP_RESAMPLE_HZ,
  type BreathingEstimate,
  type RespSource,
} from './breathing.js';

export interface PulseVitalsInput {
  /** Conditioned pulse (band-passed), uniformly sampled. */
  pulse: Float64Array;
  sampleRateHz: number;
  /** Tracked capture heart rate, Hz. */
  hrHz: number;
  /** Low-frequency intensity signal on the same grid (respiratory baseline), optional. */
  baseline?: Float64Array;
  /** Head pitch from telemetry, times relative to the pulse's first sample. */
  head?: { tSec: Float64Array; pitchDeg: Float64Array };
  /** A respiratory waveform on the pulse's grid; when given it decides the breathing rate. */
  respWaveform?: ArrayLike<number>;
  /**
   * Waveform on the pulse's grid on which beats are placed (default: the band-limited beat signal).
   * Pass the input waveform itself when it is already a clean PPG estimate (waveform → vitals).
   */
  beatWaveform?: ArrayLike<number>;
  /**
   * Per-sample confidence of the pulse, 0..1, on the pulse's grid (e.g. a model's waveform
   * confidence). An RR interval is used only when both its beats have confidence ≥ 0.5
   * (vitallens-core `src/signal/hrv.rs`).
   */
  confidence?: ArrayLike<number>;
  /** Skip the breathing estimate (the streaming beat analysis emits no breathing event). */
  skipBreathing?: boolean;
}

export interface PulseVitals {
  beats: Beats;
  rr: RrSeries;
  hrv: HrvResult | null;
  stressIndex: number | null;
  breathing: BreathingEstimate | null;
  /** Median (peak − foot) / beat period over accepted beats; NaN when unknown. */
  riseFraction: number;
  /** The beat timing's own noise, ms (beats/timing-noise.ts); NaN when too few intervals. */
  timingNoiseMs: number;
}

/** Minimum per-sample confidence at a beat for its intervals to count (vitallens-core `HrvOptions`). */
export const BEAT_MIN_CONFIDENCE = 0.5;

/** Signal for beat timing: the pulse narrowed to [0.5·HR, 3·HR] (keeps the systolic shape). */
export function beatSignal(pulse: Float64Array, sampleRateHz: number, hrHz: number): Float64Array {
  const lo = Math.max(0.5, 0.5 * hrHz);
  const hi = Math.min(0.45 * sampleRateHz, Math.max(2.5, 3 * hrHz));
  return bandPassZeroPhase(pulse, sampleRateHz, lo, hi);
}

function medianOf(values: number[]): number {
  if (!values.length) return NaN;
  const s = values.slice().sort((a, b) => a - b);
  return s[s.length >> 1];
}

function breathingFromBeats(input: PulseVitalsInput, beats: Beats, rr: RrSeries): BreathingEstimate | null {
  const fs = RESP_RESAMPLE_HZ;
  if (input.respWaveform) {
    const x = Float64Array.from(input.respWaveform);
    const t = Float64Array.from({ length: x.length }, (_, i) => i / input.sampleRateHz);
    const series = interpolateSeries(t, x, fs, 0, t[t.length - 1]);
    const src = respSource('waveform', series, fs, RESP_BAND_WAVEFORM);
    return src ? fuseBreathing([src], RESP_BAND_WAVEFORM) : null;
  }
  const n = beats.peakSec.length;
  if (n < 8) return null;
  const t0 = beats.peakSec[0];
  const t1 = beats.peakSec[n - 1];
  const band = { lowHz: RESP_BAND_PULSE.lowHz, highHz: Math.min(RESP_BAND_PULSE.highHz, 0.45 * input.hrHz) };
  const sources: RespSource[] = [];
  const add = (s: RespSource | null): void => {
    if (s) sources.push(s);
  };
  add(respSource('riav', interpolateSeries(beats.peakSec, beats.amplitude, fs, t0, t1), fs, band));
  // RIFV from accepted intervals only (an ectopic beat is not breathing).
  const tt: number[] = [];
  const vv: number[] = [];
  for (let i = 0; i < rr.rawMs.length; i++) {
    if (!rr.accepted[i]) continue;
    tt.push(rr.endSec[i]);
    vv.push(rr.rawMs[i]);
  }
  if (tt.length >= 8) add(respSource('rifv', interpolateSeries(tt, vv, fs, t0, t1), fs, band));
  const base = input.baseline;
  const mid = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const k = Math.min(input.pulse.length - 1, Math.round(beats.peakSec[i] * input.sampleRateHz));
    mid[i] = base ? base[k] : input.pulse[k] - 0.5 * beats.amplitude[i];
  }
  add(respSource('riiv', interpolateSeries(beats.peakSec, mid, fs, t0, t1), fs, band));
  if (input.head && input.head.tSec.length >= 16) {
    add(respSource('head', interpolateSeries(input.head.tSec, input.head.pitchDeg, fs, t0, t1), fs, band));
  }
  return fuseBreathing(sources, band);
}

export function pulseToVitals(input: PulseVitalsInput): PulseVitals {
  const sig = beatSignal(input.pulse, input.sampleRateHz, input.hrHz);
  const beats = detectBeats(sig, input.sampleRateHz, input.hrHz, input.beatWaveform);
  const conf = input.confidence;
  const usable = conf
    ? Array.from(beats.peakSec, (t) => {
        const k = Math.min(conf.length - 1, Math.max(0, Math.round(t * input.sampleRateHz)));
        return conf[k] >= BEAT_MIN_CONFIDENCE;
      })
    : undefined;
  const rr = rrIntervals(beats.peakSec, usable);
  const hrv = timeDomainHrv(rr);
  const stressIndex = baevskyStressIndex(rr.nnMs);
  const rise: number[] = [];
  for (let i = 1; i < beats.peakSec.length; i++) {
    if (!rr.accepted[i - 1]) continue;
    const period = beats.peakSec[i] - beats.peakSec[i - 1];
    rise.push((beats.peakSec[i] - beats.troughSec[i]) / period);
  }
  const breathing = input.skipBreathing ? null : breathingFromBeats(input, beats, rr);
  const noise = timingNoiseMs(sig, input.sampleRateHz, input.hrHz, beats.peakSec, rr.accepted);
  return { beats, rr, hrv, stressIndex, breathing, riseFraction: medianOf(rise), timingNoiseMs: noise };
}

/** Respiratory baseline from a channel: normalised, detrended by a 0.05 Hz high-pass, low-passed at 0.7 Hz. */
export function respiratoryBaseline(channel: Float64Array, sampleRateHz: number): Float64Array {
  let m = 0;
  for (let i = 0; i < channel.length; i++) m += channel[i];
  m /= Math.max(1, channel.length);
  const x = new Float64Array(channel.length);
  for (let i = 0; i < x.length; i++) x[i] = m > 0 ? channel[i] / m - 1 : 0;
  const slow = lowPassZeroPhase(x, sampleRateHz, 0.05);
  for (let i = 0; i < x.length; i++) x[i] -= slow[i];
  return lowPassZeroPhase(x, sampleRateHz, 0.7);
}
