/**
 * `@vitals/media/threads`: worker-thread pools without loading the media stack itself (a caller's
 * own worker entry, such as the server's estimator thread, imports this alone).
 */
export {
  createThreadPool,
  PoolQueueFullError,
  type RunOptions,
  type ThreadPool,
  type ThreadPoolOptions,
} from './thread-pool.js';
export { serveTasks, type TaskContext } from './serve.js';
export { siblingModule, spawnModuleWorker } from './spawn.js';
export { lowerThreadPriority } from './priority.js';
export {
  createVideoPool,
  defaultVideoThreads,
  VIDEO_WORKER_NICE,
  type ConsumedVideoResult,
  type CreatePacketConsumer,
  type PacketConsumer,
  type VideoPool,
  type VideoPoolOptions,
} from './video-pool.js';
export type { VideoResult, VideoStats } from '../video.js';
export type { AuxAnalysis } from '../aux-analyzer.js';
export {
  AUX_GROUP,
  seriesFor,
  seriesOf,
  type AuxAnchor,
  type AuxSeries,
  type AuxStep,
  type AuxWant,
} from '../aux-series.js';
