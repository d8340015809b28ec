/** Public result types of the engine (consumed by the server; names are part of the contract). */
import type { QualityLevel } from './quality/quality.js';
import type { StressLevel } from './vitals/stress.js';
import type { QualityReason } from '@vitals/protocol';

export type { QualityLevel, StressLevel };

export interface EngineMeasurement {
  durationSec: number;
  isComplete: boolean;
  /** `reasons`: why the capture is not better (quality/reasons.ts); empty when nothing is wrong. */
  quality: { level: QualityLevel; score: number; usable: boolean; reasons: QualityReason[] };
  cardiac: { heartRate: { value: number; unit: 'bpm'; confidence: number } | null };
  hrv: { sdnnMs: number; rmssdMs: number; pnn50Pct: number; confidence: number } | null;
  respiratory: { breathingRate: { value: number; unit: 'brpm'; confidence: number } | null };
  stress: { index: number; level: StressLevel; unit: 'index' } | null;
  bloodPressure: { systolicMmHg: number; diastolicMmHg: number; unit: 'mmHg'; confidence: number; tier: 'beta' } | null;
  spo2: { value: number; unit: '%'; confidence: number; tier: 'beta' } | null;
  raw: { rrIntervalsMs: number[]; ppgSignal: number[]; sampleRateHz: number };
  stats: EngineStats;
}

export interface EngineStats {
  /** Type-1 frames that entered the trace. */
  framesUsed: number;
  /** Frames missing from the timeline (gaps longer than 1.5 median intervals), estimated. */
  framesDropped: number;
  /** Type-1 frames ignored because their timestamp did not increase. */
  framesRejected: number;
  meanFps: number;
  /** Uniform analysis rate from the median inter-frame interval. */
  sampleRateHz: number;
  /** Median per-window signal-quality index, 0..1. */
  medianSqi: number;
  /** Median share of the crop weighted as skin, 0..1. */
  skinFraction: number;
  /** Pulse method whose signal is reported and used for beats. */
  pulseMethod: 'pos' | 'chrom' | 'waveform';
  /** Heart rate the chain computed even when quality is poor (diagnostics; never published then). */
  internalHeartRateBpm: number | null;
  /**
   * Share of the capture-averaged spectrum near its peak (rate/capture-rate.ts), the capture-level
   * pulse evidence the quality gate weighs (quality.ts pulseEvidence); null when not computed.
   */
  anchorShare: number | null;
  beatsDetected: number;
  rrAcceptedFraction: number;
  telemetrySamples: number;
}

export type EngineEvent =
  | { t: 'hr'; hr: number; sqi: number; tMs: number }
  | { t: 'hrv'; rmssdMs: number; sdnnMs: number; meanRrMs: number }
  | { t: 'bp'; systolicMmHg: number; diastolicMmHg: number; confidence: number }
  | { t: 'spo2'; value: number; confidence: number };
