/** Spawns the real `vitals` entry (TypeScript sources through tsx) with the given environment. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

export function spawnVitals(args: string[], env: Record<string, string> = {}): ChildProcess {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITALS_')));
  return spawn(process.execPath, ['--conditions=source', '--import', 'tsx', BIN, ...args], {
    cwd: ROOT,
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function runVitals(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnVitals(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`vitals ${args.join(' ')} did not exit in ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
