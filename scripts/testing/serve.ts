/**
 * `vitals-server serve` as `npm start` runs it, for the browser tests: a real process on the
 * source, loopback, port 0, a fresh data directory (SQLite, embedded workers), the demo on; the
 * development key it prints on its first start is returned for the Node side of a test.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdPriority } from './priority.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface Served {
  baseUrl: string;
  keyId: string;
  secret: string;
  /** The server process (its CPU time: scripts/bench/parts/media-job.ts). */
  pid: number;
  output(): string;
  stop(): Promise<void>;
}

/**
 * `niceness`: the server process's scheduling priority, every thread (priority.ts; ignored without
 * the right to raise it), for the camera test on a shared machine (chromium.ts `launchChromium`).
 */
export async function startServe(env: Record<string, string> = {}, niceness?: number): Promise<Served> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vitals-browser-serve-'));
  const childEnv: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'warn', ...env };
  delete childEnv.VITALS_DATABASE_URL;
  const child = spawn(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'packages/server/src/bin.ts'),
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--data-dir',
      dataDir,
    ],
    { cwd: REPO_ROOT, env: childEnv as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Not allowed here: it runs at the normal priority, and the camera test reports an overloaded run.
  const release =
    niceness && child.pid !== undefined
      ? holdPriority({ root: child.pid, includeRoot: true, niceness })
      : () => undefined;
  child.once('exit', release);
  let out = '';
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const stop = (): Promise<void> =>
    new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    }).finally(() => rmSync(dataDir, { recursive: true, force: true }));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`serve did not start:\n${out}`));
    }, 90_000);
    child.once('exit', (code) => reject(new Error(`serve exited (${code}):\n${out}`)));
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const url = /listening on (http:\/\/\S+)/.exec(out);
      const id = /VITALS_KEY_ID=(\S+)/.exec(out);
      const secret = /VITALS_KEY_SECRET=(\S+)/.exec(out);
      if (!url || !id || !secret) return;
      clearTimeout(timer);
      resolve({ baseUrl: url[1], keyId: id[1], secret: secret[1], pid: child.pid!, output: () => out, stop });
    });
  });
}
