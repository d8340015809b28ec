/**
 * Runs `vitals` for the tests. `runVitals` runs the CLI in-process (`runCli`, the same function the
 * executable calls, with captured output and the given environment as its whole environment), so a
 * test pays for no process start or TypeScript compilation; `spawnVitals` starts the real entry
 * (TypeScript sources through tsx) for the one test that proves the executable itself (SIGINT).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli } from '@vitals/cli';

export const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function credsEnv(key: { keyId: string; secret: string }, baseUrl: string): Record<string, string> {
  return { VITALS_KEY_ID: key.keyId, VITALS_KEY_SECRET: key.secret, VITALS_BASE_URL: baseUrl };
}

/** `vitals <args>` in-process; `env` is all the environment the CLI sees (as spawnVitals's `VITALS_*`). */
export async function runVitals(args: string[], env: Record<string, string> = {}): Promise<RunResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    env: { ...env },
  });
  return { code, stdout, stderr };
}

/** The real executable, with the parent's environment minus its `VITALS_*` variables, plus `env`. */
export function spawnVitals(args: string[], env: Record<string, string> = {}): ChildProcess {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITALS_')));
  return spawn(process.execPath, ['--conditions=source', '--import', 'tsx', BIN, ...args], {
    cwd: ROOT,
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
