/** The batch tier's surface for the rest of the server (deps.ts, server.ts, the CLI). */
export { createBatchRuntime, batchOf, type BatchRuntime } from './runtime.js';
export { loadBatchConfig, type BatchConfig } from './config.js';
export { batchPlugin } from './plugin.js';
export { runJob, Worker } from './worker.js';
export { sweepOnce } from './sweeper.js';
