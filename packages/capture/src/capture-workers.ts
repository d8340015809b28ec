/** `VitalsCapture`'s plumbing: waiting on its workers' messages, and the camera's own frame counts. */
import type { CaptureStats } from './capture-types.js';
import type { FromTracker } from './tracker-protocol.js';
import type { FromWorker } from './worker-protocol.js';

export interface TrackerWorker {
  worker: Worker;
  version: string;
  backend: string;
  loadMs: number;
}

/** Waits for the first message of `worker` that `pick` accepts (or an `error` message). */
export function nextMessage<T>(worker: Worker, pick: (d: FromTracker | FromWorker) => T | undefined): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMsg = (e: MessageEvent<FromTracker | FromWorker>): void => {
      if (e.data.t === 'error') {
        done();
        reject(new Error(e.data.message));
        return;
      }
      const v = pick(e.data);
      if (v !== undefined) {
        done();
        resolve(v);
      }
    };
    const onErr = (e: ErrorEvent): void => {
      done();
      reject(new Error(`a capture worker failed: ${e.message}`));
    };
    const done = (): void => {
      worker.removeEventListener('message', onMsg);
      worker.removeEventListener('error', onErr);
    };
    worker.addEventListener('message', onMsg);
    worker.addEventListener('error', onErr);
  });
}

/** `MediaStreamTrack.stats` of a video track (Chromium). */
export interface TrackStats {
  totalFrames: number;
  discardedFrames: number;
}

export function cameraCounts(
  a?: TrackStats,
  b?: TrackStats,
): Pick<CaptureStats, 'cameraFrames' | 'cameraFramesDiscarded'> {
  if (!a || !b || typeof a.totalFrames !== 'number') return {};
  return { cameraFrames: b.totalFrames - a.totalFrames, cameraFramesDiscarded: b.discardedFrames - a.discardedFrames };
}
