/**
 * Which ffmpeg/ffprobe to run: `FFMPEG_PATH` (and `FFPROBE_PATH`, else the ffprobe beside it),
 * then the system `PATH`, then the static binaries shipped in npm (@ffmpeg-installer,
 * @ffprobe-installer). Resolved once per process.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface FfmpegPaths {
  ffmpeg: string;
  ffprobe: string;
  source: 'env' | 'path' | 'npm';
}

const require = createRequire(import.meta.url);
let resolved: FfmpegPaths | undefined;

function runs(bin: string): boolean {
  try {
    return spawnSync(bin, ['-version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
  } catch {
    return false;
  }
}

function onPath(name: string, envPath: string | undefined): string | undefined {
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (existsSync(candidate) && runs(candidate)) return candidate;
  }
  return undefined;
}

/** Finds ffmpeg and ffprobe (see the module comment for the order). Throws when none runs. */
export function resolveFfmpeg(env: NodeJS.ProcessEnv = process.env): FfmpegPaths {
  if (resolved && env === process.env) return resolved;
  const result = find(env);
  if (env === process.env) resolved = result;
  return result;
}

function find(env: NodeJS.ProcessEnv): FfmpegPaths {
  const envFfmpeg = env.FFMPEG_PATH;
  if (envFfmpeg) {
    const sibling = path.join(path.dirname(envFfmpeg), path.basename(envFfmpeg).replace('ffmpeg', 'ffprobe'));
    const ffprobe = env.FFPROBE_PATH || (existsSync(sibling) ? sibling : (onPath('ffprobe', env.PATH) ?? npmProbe()));
    if (!runs(envFfmpeg)) throw new Error(`FFMPEG_PATH=${envFfmpeg} does not run`);
    return { ffmpeg: envFfmpeg, ffprobe, source: 'env' };
  }
  const sysFfmpeg = onPath('ffmpeg', env.PATH);
  const sysProbe = onPath('ffprobe', env.PATH);
  if (sysFfmpeg && sysProbe) return { ffmpeg: sysFfmpeg, ffprobe: sysProbe, source: 'path' };
  const ffmpeg = (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  return { ffmpeg, ffprobe: npmProbe(), source: 'npm' };
}

function npmProbe(): string {
  return (require('@ffprobe-installer/ffprobe') as { path: string }).path;
}
