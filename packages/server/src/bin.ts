#!/usr/bin/env node
/**
 * The `vitals-server` executable: the operator command line (cli/main.ts) with the process's
 * streams and environment; `serve` runs until SIGINT or SIGTERM.
 */
import { runServerCli } from './cli/main.js';

const code = await runServerCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  untilStopped: () =>
    new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    }),
});
process.exitCode = code;
