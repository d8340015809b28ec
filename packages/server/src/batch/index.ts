/** The batch tier's surface for the rest of the server (deps.ts, server.ts, the CLI). */
export { createBatchRuntime } from './runtime.js';
export { batchOf, type BatchRuntime, type BatchWorker } from './batch-runtime.js';
export { loadBatchConfig, type BatchConfig } from './config.js';
export { batchPlugin } from './plugin.js';
export { runJob, Worker } from './worker.js';
export { sweepOnce } from './sweeper.js';
