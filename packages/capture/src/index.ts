/**
 * @vitals/capture: the browser capture (issue 15 §3). Camera → tracker (@vitals/tracker) → packets,
 * on the device (the engine in a Web Worker) or to the cloud (`StreamSession`), with guidance, the
 * model bundle fetched with a grant, and the drop-in `<vitals-measure>` element. See docs/capture.md.
 *
 * The isomorphic parts (guidance, the on-device estimator, the result body) are exported from
 * `@vitals/capture/core` for Node too.
 */
export * from './core.js';
export {
  VitalsCapture,
  type CaptureEvents,
  type CaptureMode,
  type CaptureOptions,
  type CaptureOutcome,
  type CaptureStats,
  type RunOptions,
} from './capture.js';
export { openCamera, CameraError, CAMERA_MESSAGES, cameraErrorCode, type CameraErrorCode } from './camera.js';
export {
  loadBundle,
  BundleError,
  TRACKER_FILES,
  type LoadedBundle,
  type ManifestFile,
  type ModelGrant,
} from './bundle.js';
export { loadBrowserHuman } from './human-browser.js';
export type { FromTracker, ToTracker, TrackState } from './tracker-protocol.js';
export { VitalsMeasureElement, defineVitalsMeasure, type MeasureResultDetail } from './element.js';
export { renderResult, metricRows, DISCLAIMER, type MetricRow, type ShownMeasurement } from './result-view.js';
