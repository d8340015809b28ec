/** The capture's isomorphic core (no DOM): guidance, the on-device estimator, the result body. */
export {
  Guidance,
  GUIDANCE_LIMITS,
  GUIDANCE_MESSAGES,
  conditions,
  type GuidanceChange,
  type GuidanceCode,
  type GuidanceSample,
} from './guidance.js';
export { OnDeviceEstimator, type WavePoint } from './on-device.js';
export { toOnDeviceResult, type OnDeviceResult } from './result.js';
export { packetBytes } from './packets.js';
export type { FromWorker, ToWorker } from './worker-protocol.js';
