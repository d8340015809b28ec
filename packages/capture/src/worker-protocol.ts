/** Messages between the page and the on-device estimator's Web Worker (estimator-worker.ts). */
import type { EngineEvent, EngineMeasurement } from '@vitals/engine';
import type { OnDeviceResult } from './result.js';
import type { WavePoint } from './on-device.js';

export type ToWorker =
  /** Packets in wire bytes, one buffer each (transferred). */
  | { t: 'packets'; list: ArrayBuffer[] }
  /** `facePresence`: share of the camera's frames with a followed face (for the quality reasons). */
  | { t: 'finish'; sdkVersion: string; modelsVersion: string; facePresence?: number };

export type FromWorker =
  | { t: 'ready' }
  | { t: 'events'; events: EngineEvent[]; wave: WavePoint[] }
  | {
      t: 'result';
      result: OnDeviceResult;
      measurement: EngineMeasurement;
      /** Engine time per face crop in the worker, ms (docs/benchmarks.md). */
      msPerFrame: number;
      frames: number;
    }
  | { t: 'error'; message: string };
