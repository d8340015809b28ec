/**
 * @vitals/engine: the rPPG signal chain (docs/engine.md). Isomorphic: typed arrays, no Node APIs.
 */
export type { EngineMeasurement, EngineEvent, EngineStats, QualityLevel, StressLevel } from './types.js';
export { estimateOffline } from './estimators/offline.js';
export { StreamingEstimator, type StreamingOptions } from './estimators/streaming.js';
export { analyzeTrace, type AnalyzeOptions } from './estimators/analyze.js';
export type { CaptureSource } from './quality/capture-facts.js';
export { qualityReasons, reasonsFromFacts, REASON_THRESHOLDS, type GateVerdict } from './quality/reasons.js';
export { waveformToVitals, type WaveformVitals, type WaveformOptions } from './estimators/waveform.js';
export { generatePhantom, phantomStream, type PhantomOptions, type PhantomTruth } from './phantom/generate.js';
export { buildRgbTrace, traceFromRgb, createRgbTrace, appendPacket, type RgbTrace } from './trace/rgb-trace.js';
export { skinWeightedRgb } from './trace/skin-trace.js';
export { meanRgb } from './trace/crop-means.js';
export { createSkinTraceState } from './trace/skin-trace-state.js';
export { baevskyStressIndex, stressLevel } from './vitals/stress.js';
