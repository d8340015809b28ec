// Waveform → vitals: a PPG (and optionally a respiratory waveform) at a known rate in; heart
// rate, HRV, breathing rate and stress index out. The same stages as the trace chain after pulse
// extraction (pulse-signals.ts `conditionPulse`, track-heart-rate.ts, pulse-vitals.ts). Beats are
// detected on the conditioned pulse but placed on the input waveform itself, which is taken to be
// a clean PPG estimate (as vitallens-core does with its model waveform; peaks.ts); with a per-sample
// confidence, only intervals between confident beats count (rr-intervals.ts).
import { lowPassZeroPhase } from '../dsp/butterworth.js';
import { median, roundTo } from '../dsp/stats.js';
import { conditionPulse } from '../pulse/pulse-signals.js';
import { trackHeartRate } from '../rate/track-heart-rate.js';
import { pulseToVitals } from '../vitals/pulse-vitals.js';
import { stressLevel, type StressLevel } from '../vitals/stress.js';
import { HR_EVENT_MIN_SQI } from '@vitals/protocol';

export interface WaveformVitals {
  heartRate: { value: number; unit: 'bpm'; confidence: number } | null;
  hrv: { sdnnMs: number; rmssdMs: number; pnn50Pct: number; meanRrMs: number; confidence: number } | null;
  breathingRate: { value: number; unit: 'brpm'; confidence: number } | null;
  stress: { index: number; level: StressLevel; unit: 'index' } | null;
  rrIntervalsMs: number[];
  /** Median window signal-quality index, 0..1. */
  sqi: number;
}

export interface WaveformOptions {
  /** Respiratory waveform sampled like the PPG; when present it decides the breathing rate. */
  respiratoryWaveform?: ArrayLike<number>;
  /**
   * Per-sample confidence of the PPG waveform, 0..1, same length as the waveform (e.g. VitalLens'
   * `ppg_waveform.confidence`). RR intervals are used only between beats with confidence ≥ 0.5.
   */
  confidence?: ArrayLike<number>;
  /** Minimum median SQI to report anything (default: the streaming `hr` threshold, 0.38). */
  minSqi?: number;
}

/**
 * @example
 *   const fs = 30;
 *   const ppg = Float64Array.from({ length: 900 }, (_, i) => Math.sin(2 * Math.PI * 1.2 * i / fs));
 *   waveformToVitals(ppg, fs).heartRate?.value; // ≈ 72
 */
export function waveformToVitals(
  ppg: ArrayLike<number>,
  sampleRateHz: number,
  opts: WaveformOptions = {},
): WaveformVitals {
  const empty: WaveformVitals = {
    heartRate: null,
    hrv: null,
    breathingRate: null,
    stress: null,
    rrIntervalsMs: [],
    sqi: 0,
  };
  if (ppg.length < 4 * sampleRateHz) return empty;
  const x = Float64Array.from(ppg);
  const pulse = conditionPulse(x, sampleRateHz);
  const track = trackHeartRate([pulse], sampleRateHz);
  const sqi = track.sqi.length ? median(track.sqi) : 0;
  const hrBpm = track.captureHrBpm;
  if (!Number.isFinite(hrBpm) || sqi < (opts.minSqi ?? HR_EVENT_MIN_SQI)) return { ...empty, sqi: roundTo(sqi, 3) };
  const slow = lowPassZeroPhase(x, sampleRateHz, 0.05);
  const baseline = lowPassZeroPhase(
    Float64Array.from(x, (v, i) => v - slow[i]),
    sampleRateHz,
    0.7,
  );
  const v = pulseToVitals({
    pulse,
    sampleRateHz,
    hrHz: hrBpm / 60,
    baseline,
    respWaveform: opts.respiratoryWaveform,
    beatWaveform: x,
    confidence: opts.confidence && opts.confidence.length === x.length ? opts.confidence : undefined,
  });
  const conf = roundTo(Math.min(1, sqi / 0.6), 2);
  const h = v.hrv;
  return {
    heartRate: { value: roundTo(hrBpm, 1), unit: 'bpm', confidence: conf },
    hrv:
      h && h.nnCount >= 15
        ? {
            sdnnMs: roundTo(h.sdnnMs, 1),
            rmssdMs: roundTo(h.rmssdMs, 1),
            pnn50Pct: roundTo(h.pnn50Pct, 1),
            meanRrMs: roundTo(h.meanRrMs, 1),
            confidence: roundTo(conf * h.acceptedFraction, 2),
          }
        : null,
    breathingRate: v.breathing
      ? {
          value: roundTo(v.breathing.rateBrpm, 1),
          unit: 'brpm',
          confidence: roundTo(v.breathing.confidence, 2),
        }
      : null,
    stress:
      v.stressIndex !== null
        ? { index: roundTo(v.stressIndex, 1), level: stressLevel(v.stressIndex), unit: 'index' }
        : null,
    rrIntervalsMs: Array.from(v.rr.nnMs, (r) => roundTo(r, 1)),
    sqi: roundTo(sqi, 3),
  };
}
