// A whole video job through `vitals-server serve` (scripts/testing/serve.ts: the real server as
// `npm start` runs it, SQLite, embedded worker): `vitals measure` (the CLI, a process of its own)
// uploads the file, creates the job and polls it to the end. The figure is the server process's
// CPU time (all its threads, plus the ffmpeg/ffprobe children it reaped) from before the upload to
// the settled job, read from /proc. Several jobs on one server: the first pays the face models' load,
// the next ones run on a warm process (as every job of a long-lived worker does).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, startServe } from '../../testing/serve.js';

export interface JobCpu {
  cold: number;
  /** One figure per warm job, in order. */
  warm: number[];
  ok: boolean;
  detail: string;
}

const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** utime + stime + cutime + cstime of a process, seconds (Linux /proc). */
function procCpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14-17 of proc(5) are 12-15 here (the first two, pid and comm, were cut off).
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICK;
}

function measure(
  served: { baseUrl: string; keyId: string; secret: string },
  file: string,
  features: string[] | null,
): { ok: boolean; out: string } {
  const r = spawnSync(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      join(REPO_ROOT, 'packages/cli/src/bin.ts'),
      'measure',
      file,
      '--consent',
      ...(features ? ['--features', features.join(',')] : []),
      '--json',
      '--interval',
      '0.2',
    ],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      maxBuffer: 16 << 20,
      env: {
        ...process.env,
        VITALS_BASE_URL: served.baseUrl,
        VITALS_KEY_ID: served.keyId,
        VITALS_KEY_SECRET: served.secret,
      },
    },
  );
  return { ok: r.status === 0, out: r.status === 0 ? r.stdout : r.stderr.slice(-400) };
}

/**
 * CPU of the server for a job on `fileA` (cold process), then one job on each of `warmFiles` (the
 * same video in other bytes) on the now warm process. `features`: what the jobs order (`null`:
 * nothing named, so every feature, the spec's default and the CLI's).
 */
export async function jobCpu(fileA: string, warmFiles: string[], features: string[] | null = ['hrv']): Promise<JobCpu> {
  const served = await startServe();
  try {
    const status = (o: { ok: boolean; out: string }): string => {
      if (!o.ok) return `failed: ${o.out}`;
      try {
        const j = JSON.parse(o.out) as { status?: string; measurement?: { heartRate?: unknown } };
        return j.status ?? 'ok';
      } catch {
        return 'ok';
      }
    };
    let c = procCpu(served.pid);
    const a = measure(served, fileA, features);
    const cold = procCpu(served.pid) - c;
    const warm: number[] = [];
    const details = [status(a)];
    let ok = a.ok;
    for (const f of warmFiles) {
      c = procCpu(served.pid);
      const b = measure(served, f, features);
      warm.push(procCpu(served.pid) - c);
      details.push(status(b));
      ok &&= b.ok;
    }
    return { cold, warm, ok, detail: details.join(' / ') };
  } finally {
    await served.stop();
  }
}
