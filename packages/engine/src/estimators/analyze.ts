// The offline chain over an accumulated RGB trace: uniform resampling → POS and CHROM pulses →
// tracked heart rate → beats, HRV, breathing, stress, beta BP and SpO2 → quality gate.
// Both estimators end here (streaming `finish()` calls this over its own trace).
import { medianIntervalMicros, resampleUniform } from '../dsp/resample.js';
import { median, roundTo } from '../dsp/stats.js';
import { conditionPulse, REST_BAND, WIDE_BAND, type PulseBand } from '../pulse/pulse-signals.js';
import { beatTimingPulse, referencedPulses } from '../pulse/background-reference.js';
import { assessQuality, type PulseEvidence, type QualityAssessment } from '../quality/quality.js';
import type { CaptureSource } from '../quality/capture-facts.js';
import { qualityReasons } from '../quality/reasons.js';
import { trackHeartRate, type HrTrack } from '../rate/track-heart-rate.js';
import { captureHeartRate } from '../rate/capture-rate.js';
import { bandObservable } from '../rate/hr-spectrum.js';
import type { RgbTrace } from '../trace/rgb-trace.js';
import type { EngineMeasurement, EngineStats } from '../types.js';
import { estimateBloodPressure, estimateSpo2 } from '../vitals/beta-models.js';
import { pulseToVitals, respiratoryBaseline, type PulseVitals } from '../vitals/pulse-vitals.js';
import { stressLevel } from '../vitals/stress.js';

import { hrvPublishable } from './hrv-rule.js';

export interface CaptureTiming {
  durationSec: number;
  sampleRateHz: number;
  meanFps: number;
  framesDropped: number;
}

export function captureTiming(tMicros: Float64Array, n: number): CaptureTiming {
  if (n < 2) return { durationSec: 0, sampleRateHz: 0, meanFps: 0, framesDropped: 0 };
  const dt = medianIntervalMicros(tMicros, 0, n);
  const durationSec = (tMicros[n - 1] - tMicros[0]) / 1e6;
  let dropped = 0;
  for (let i = 1; i < n; i++) {
    const d = tMicros[i] - tMicros[i - 1];
    if (d > 1.5 * dt) dropped += Math.round(d / dt) - 1;
  }
  return {
    durationSec,
    sampleRateHz: 1e6 / dt,
    meanFps: durationSec > 0 ? (n - 1) / durationSec : 0,
    framesDropped: dropped,
  };
}

/** Red/blue ratio of ratios of the pulsatile components (for the SpO2 beta model). */
export function redBlueRatioOfRatios(r: Float64Array, b: Float64Array, sampleRateHz: number, hrHz: number): number {
  const band = { lowHz: Math.max(0.5, hrHz - 0.3), highHz: hrHz + 0.3 };
  const ac = (x: Float64Array): number => {
    let m = 0;
    for (let i = 0; i < x.length; i++) m += x[i];
    m /= x.length;
    if (m <= 0) return NaN;
    // A plain loop: Float64Array.from with a mapping function is several times slower.
    const y = new Float64Array(x.length);
    for (let i = 0; i < x.length; i++) y[i] = x[i] / m;
    const f = conditionPulse(y, sampleRateHz, band, y);
    let s = 0;
    for (let i = 0; i < f.length; i++) s += f[i] * f[i];
    return Math.sqrt(s / f.length);
  };
  const ar = ac(r);
  const ab = ac(b);
  return ab > 0 ? ar / ab : NaN;
}

function bestMethod(track: HrTrack): number {
  const w = [0, 0];
  for (let i = 0; i < track.method.length; i++) w[track.method[i]] += track.sqi[i];
  return w[1] > w[0] ? 1 : 0;
}

function nullMetrics(): Pick<
  EngineMeasurement,
  'cardiac' | 'hrv' | 'respiratory' | 'stress' | 'bloodPressure' | 'spo2'
> {
  return {
    cardiac: { heartRate: null },
    hrv: null,
    respiratory: { breathingRate: null },
    stress: null,
    bloodPressure: null,
    spo2: null,
  };
}

/** Assembles the published measurement from the chain's intermediate results. */
export function composeMeasurement(p: {
  timing: CaptureTiming;
  quality: QualityAssessment;
  hrBpm: number;
  vitals: PulseVitals | null;
  pulse: Float64Array;
  bp: ReturnType<typeof estimateBloodPressure> | null;
  spo2: ReturnType<typeof estimateSpo2> | null;
  stats: EngineStats;
}): EngineMeasurement {
  const { timing, quality, vitals } = p;
  const raw = {
    rrIntervalsMs: vitals ? Array.from(vitals.rr.nnMs, (v) => roundTo(v, 1)) : [],
    ppgSignal: Array.from(p.pulse, (v) => roundTo(v, 4)),
    sampleRateHz: roundTo(timing.sampleRateHz, 3),
  };
  const base = {
    durationSec: roundTo(timing.durationSec, 2),
    isComplete: quality.usable,
    // `reasons` is filled by analyzeTraceWithInternals (quality/reasons.ts), from the verdict.
    quality: { level: quality.level, score: roundTo(quality.score, 2), usable: quality.usable, reasons: [] },
    raw,
    stats: p.stats,
  };
  if (!quality.usable || !Number.isFinite(p.hrBpm) || !vitals) return { ...base, ...nullMetrics() };
  // The heart rate's confidence is calibrated (quality.ts heartRateConfidence: the chance it is within
  // 5 bpm); the other metrics keep the quality score as theirs.
  const conf = roundTo(quality.confidence, 2);
  const h = vitals.hrv;
  const hrvOk = h !== null && hrvPublishable(vitals, quality.level, timing.durationSec, timing.sampleRateHz);
  const hrvConf = h ? quality.score * h.acceptedFraction * Math.min(1, h.nnCount / 60) : 0;
  const br = vitals.breathing;
  return {
    ...base,
    cardiac: { heartRate: { value: roundTo(p.hrBpm, 1), unit: 'bpm', confidence: conf } },
    hrv: hrvOk
      ? {
          sdnnMs: roundTo(h.sdnnMs, 1),
          rmssdMs: roundTo(h.rmssdMs, 1),
          pnn50Pct: roundTo(h.pnn50Pct, 1),
          confidence: roundTo(hrvConf, 2),
        }
      : null,
    respiratory: {
      breathingRate:
        br && br.confidence * quality.score >= 0.05
          ? { value: roundTo(br.rateBrpm, 1), unit: 'brpm', confidence: roundTo(br.confidence * quality.score, 2) }
          : null,
    },
    stress:
      hrvOk && vitals.stressIndex !== null
        ? { index: roundTo(vitals.stressIndex, 1), level: stressLevel(vitals.stressIndex), unit: 'index' }
        : null,
    bloodPressure: p.bp
      ? {
          systolicMmHg: Math.round(p.bp.systolicMmHg),
          diastolicMmHg: Math.round(p.bp.diastolicMmHg),
          unit: 'mmHg',
          confidence: roundTo(p.bp.confidence, 2),
          tier: 'beta',
        }
      : null,
    spo2: p.spo2
      ? { value: roundTo(p.spo2.value, 1), unit: '%', confidence: roundTo(p.spo2.confidence, 2), tier: 'beta' }
      : null,
  };
}

export interface AnalyzeOptions {
  /**
   * Heart-rate band. 'rest' (default): 42–150 bpm, for seated captures; 'wide': 36–210 bpm, for
   * captures after exercise (more noise let in, so less robust on poor video).
   */
  band?: 'rest' | 'wide';
  /** What the server knows of the source video (a video job), for the quality reasons. */
  source?: CaptureSource;
}

export function bandOf(opts: AnalyzeOptions): PulseBand {
  return opts.band === 'wide' ? WIDE_BAND : REST_BAND;
}

export function analyzeTrace(trace: RgbTrace, opts: AnalyzeOptions = {}): EngineMeasurement {
  return analyzeTraceWithInternals(trace, opts).measurement;
}

/** The published measurement with the chain's beat-level results behind it. */
export interface TraceAnalysis {
  measurement: EngineMeasurement;
  /**
   * Beats, RR series and HRV as the chain computed them from its pulse, whatever the quality gate
   * and the HRV conditions decided about publishing (null when no capture rate was found). For
   * evaluation (scripts/eval): deliberately not part of `EngineMeasurement` or `EngineStats`, which
   * the server stores and returns.
   */
  vitals: PulseVitals | null;
  /** The evidence for a pulse the quality gate weighed (quality.ts pulseEvidence; null when not analysed). */
  evidence: PulseEvidence | null;
}

/** `analyzeTrace`, also returning the chain's internal beat-level results (same measurement). */
export function analyzeTraceWithInternals(trace: RgbTrace, opts: AnalyzeOptions = {}): TraceAnalysis {
  const a = analyzeChain(trace, opts);
  a.measurement.quality.reasons = qualityReasons(trace, a.measurement, opts.source);
  return a;
}

function analyzeChain(trace: RgbTrace, opts: AnalyzeOptions): TraceAnalysis {
  const band = bandOf(opts);
  const n = trace.n;
  const timing = captureTiming(trace.tMicros, n);
  const skin = n ? median(trace.skinFraction.subarray(0, n)) : 0;
  const stats: EngineStats = {
    framesUsed: n,
    framesDropped: timing.framesDropped,
    framesRejected: trace.framesRejected,
    meanFps: roundTo(timing.meanFps, 2),
    sampleRateHz: roundTo(timing.sampleRateHz, 3),
    medianSqi: 0,
    skinFraction: roundTo(skin, 2),
    pulseMethod: 'pos',
    internalHeartRateBpm: null,
    anchorShare: null,
    beatsDetected: 0,
    rrAcceptedFraction: 0,
    telemetrySamples: trace.telemetry.n,
  };
  const poor = assessQuality([], skin, timing.durationSec);
  // Too few frames, or a frame rate too low to resolve the heart-rate band (a rate above 0.45·fs
  // would alias): poor, never a number and never an exception.
  if (n < 8 || !(timing.sampleRateHz > 0) || !bandObservable(band, timing.sampleRateHz)) {
    return {
      measurement: composeMeasurement({
        timing,
        quality: poor,
        hrBpm: NaN,
        vitals: null,
        pulse: new Float64Array(0),
        bp: null,
        spo2: null,
        stats,
      }),
      vitals: null,
      evidence: null,
    };
  }
  const fs = timing.sampleRateHz;
  const bgIn = trace.bg;
  const channels = bgIn ? [trace.r, trace.g, trace.b, bgIn.r, bgIn.g, bgIn.b] : [trace.r, trace.g, trace.b];
  if (trace.texture) channels.push(trace.texture);
  const u = resampleUniform(trace.tMicros, channels, fs, { to: n });
  const [r, g, b] = u.channels;
  const bgU = bgIn ? { r: u.channels[3], g: u.channels[4], b: u.channels[5] } : null;
  const texture = trace.texture ? u.channels[channels.length - 1] : null;
  const pulses = referencedPulses({ r, g, b }, bgU, fs, band, { texture });
  const track = trackHeartRate([pulses.pos, pulses.chrom], fs, { band, noise: pulses.noise });
  stats.medianSqi = track.sqi.length ? roundTo(median(track.sqi), 3) : 0;
  const m = bestMethod(track);
  const pulse = m === 1 ? pulses.chrom : pulses.pos;
  stats.pulseMethod = m === 1 ? 'chrom' : 'pos';
  // The capture rate: the POS pulse tracked inside a corridor around the peak of the
  // reference-weighted averaged spectrum (rate/capture-rate.ts). `track` (both methods, whole
  // band) still supplies the SQI for the quality gate and the method for the beats.
  const capture = captureHeartRate(pulses.pos, fs, {
    band,
    references: pulses.noises,
    track: pulses.noise === (pulses.noises[0] ?? null) ? track : undefined,
  });
  const hrBpm = capture.hrBpm;
  const quality = assessQuality(track.sqi, skin, timing.durationSec, { anchorShare: capture.anchorShare });
  const evidence = quality.evidence;
  stats.internalHeartRateBpm = Number.isFinite(hrBpm) ? roundTo(hrBpm, 1) : null;
  stats.anchorShare = Number.isFinite(capture.anchorShare) ? roundTo(capture.anchorShare, 3) : null;
  if (!Number.isFinite(hrBpm)) {
    return {
      measurement: composeMeasurement({
        timing,
        quality: poor,
        hrBpm,
        vitals: null,
        pulse,
        bp: null,
        spo2: null,
        stats,
      }),
      vitals: null,
      evidence,
    };
  }
  const tel = trace.telemetry;
  const head =
    tel.n >= 16
      ? {
          tSec: Float64Array.from(tel.tMicros.subarray(0, tel.n), (t) => (t - u.t0Micros) / 1e6),
          pitchDeg: Float64Array.from(tel.pitchDeg.subarray(0, tel.n)),
        }
      : undefined;
  // Beats (HRV, stress, breathing from beats, the BP rise time) are timed on the same method's
  // pulse with only significant reference fits removed (pulse/background-reference.ts
  // beatTimingPulse); the heart rate and the published waveform keep `pulse`.
  const vitals = pulseToVitals({
    pulse: beatTimingPulse({ r, g, b }, bgU, fs, band, m === 1 ? 'chrom' : 'pos', { texture }),
    sampleRateHz: fs,
    hrHz: hrBpm / 60,
    baseline: respiratoryBaseline(g, fs),
    head,
  });
  stats.beatsDetected = vitals.beats.peakSec.length;
  stats.rrAcceptedFraction = vitals.hrv ? roundTo(vitals.hrv.acceptedFraction, 2) : 0;
  const sqi = stats.medianSqi;
  const bp = estimateBloodPressure(hrBpm, vitals.riseFraction, sqi);
  const spo2 = estimateSpo2(redBlueRatioOfRatios(r, b, fs, hrBpm / 60), sqi);
  return {
    measurement: composeMeasurement({ timing, quality, hrBpm, vitals, pulse, bp, spo2, stats }),
    vitals,
    evidence,
  };
}
