export { runCli } from './main.js';
export { exitCodeFor, EXIT_CODES, type ExitCode } from './exit-codes.js';
export { loadConfig, DEFAULT_BASE_URL, type CliConfig } from './config.js';
export { idempotencyKeyFor, VIDEO_TYPES } from './commands/measure.js';
export { parseSince } from './commands/logs-tail.js';
export type { CliIo } from './io.js';
