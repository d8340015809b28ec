/**
 * Entry of the estimator thread (media-threads.ts): a long live session's final analysis, and a
 * frames job's decoding, checks and estimate, off the main thread (a video job is estimated on its
 * video worker: video-consumer.ts). The engine is
 * pure, so the thread's result is the one the main thread would compute.
 */
import {
  analyzeTrace,
  estimateOffline,
  type AnalyzeOptions,
  type EngineMeasurement,
  type RgbTrace,
} from '@vitals/engine';
import { workerData } from 'node:worker_threads';
import { lowerThreadPriority, serveTasks } from '@vitals/media/threads';
import { reassembleAux } from './aux.js';
import { checkFramesFile, type FramesCheck } from './frames.js';

export type EstimateTask =
  /** A live session's final: its streaming estimator's input (`finishInput()`). */
  | { kind: 'trace'; trace: RgbTrace; opts: AnalyzeOptions }
  /** `aux`: also return the file's reassembled aux JPEGs (emotion or gaze ordered). */
  | { kind: 'frames'; bytes: Uint8Array; aux: boolean };

/** A frames file's check without its packets (they stay on the thread). */
export type FramesVerdict = Exclude<FramesCheck, { ok: true }> | { ok: true; durationMicros: number };

export type EstimateOutput =
  | { kind: 'trace'; measurement: EngineMeasurement }
  | { kind: 'frames'; check: FramesVerdict; measurement?: EngineMeasurement; auxImages: Uint8Array[] };

lowerThreadPriority((workerData as { nice?: number } | null)?.nice ?? 0);

serveTasks<EstimateTask, EstimateOutput>((task) => {
  if (task.kind === 'trace') return { kind: 'trace', measurement: analyzeTrace(task.trace, task.opts) };
  const check = checkFramesFile(task.bytes);
  if (!check.ok) return { kind: 'frames', check, auxImages: [] };
  return {
    kind: 'frames',
    check: { ok: true, durationMicros: check.durationMicros },
    measurement: estimateOffline(check.packets),
    auxImages: task.aux ? reassembleAux(check.packets) : [],
  };
});
