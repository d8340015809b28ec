// Offline estimator: whole capture → measurement. Builds the per-frame trace with the same
// function the streaming estimator uses, then runs the chain (analyze.ts).
import type { Packet } from '@vitals/protocol';
import { buildRgbTrace } from '../trace/rgb-trace.js';
import type { EngineMeasurement } from '../types.js';
import { analyzeTrace, type AnalyzeOptions } from './analyze.js';

/**
 * Estimates every vital from a whole capture of packets (type 1 required; 2 and 3 optional).
 * @example
 *   const { packets } = generatePhantom({ durationSec: 30, heartRateBpm: 72 });
 *   estimateOffline(packets).cardiac.heartRate?.value; // ≈ 72
 */
export function estimateOffline(packets: Iterable<Packet>, opts: AnalyzeOptions = {}): EngineMeasurement {
  return analyzeTrace(buildRgbTrace(packets), opts);
}
