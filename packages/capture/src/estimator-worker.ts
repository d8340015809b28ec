/**
 * The on-device estimator's Web Worker (built to dist/browser/estimator-worker.js): the engine runs
 * off the page's main thread, so the camera, the tracker and the preview keep their frame rate.
 */
import { OnDeviceEstimator } from './on-device.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

interface WorkerScope {
  onmessage: ((e: { data: ToWorker }) => void) | null;
  postMessage(m: FromWorker): void;
}
const scope = globalThis as unknown as WorkerScope;
let est = new OnDeviceEstimator();

scope.onmessage = (e) => {
  const m = e.data;
  try {
    if (m.t === 'packets') {
      const out: FromWorker & { t: 'events' } = { t: 'events', events: [], wave: [] };
      for (const buf of m.list) {
        const r = est.push(new Uint8Array(buf));
        out.events.push(...r.events);
        if (r.wave) out.wave.push(r.wave);
      }
      if (out.events.length || out.wave.length) scope.postMessage(out);
    } else if (m.t === 'finish') {
      const { result, measurement } = est.finish(
        { sdkVersion: m.sdkVersion, modelsVersion: m.modelsVersion },
        m.facePresence,
      );
      scope.postMessage({
        t: 'result',
        result,
        measurement,
        msPerFrame: est.frames ? est.pushMs / est.frames : 0,
        frames: est.frames,
      });
      est = new OnDeviceEstimator();
    }
  } catch (err) {
    scope.postMessage({ t: 'error', message: err instanceof Error ? err.message : String(err) });
  }
};
scope.postMessage({ t: 'ready' });
