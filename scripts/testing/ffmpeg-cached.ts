/**
 * Test clips made by ffmpeg once and kept in the OS temp dir, shared by the media and server tests
 * (both encode real and generated clips; the 8k and 16k clips took tens of seconds under load).
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { resolveFfmpeg } from '@vitals/media';

const run = promisify(execFile);

/**
 * ffmpeg's output for `args` (its output file left out), made once and kept in the OS temp dir
 * under a name keyed by everything that decides its bytes: the arguments, the ffmpeg binary (path,
 * size, mtime) and every input file named by `-i` (path, size, mtime). A later run, or another test
 * file, reuses the clip instead of encoding it again. The tests judge what they decode from a clip and never compare it with a fresh encode, which
 * may differ by a few bytes (x264's frame threads under rate control are not run-to-run exact).
 * Written under a temporary name and renamed, so a concurrent or interrupted run never sees half a
 * file.
 * VITALS_TEST_CLIP_CACHE=off encodes afresh every time. Returns the cached file's path (read it,
 * never write to it).
 */
export async function ffmpegCached(args: string[], ext: string): Promise<string> {
  const { ffmpeg } = resolveFfmpeg();
  // A bare command name (FFMPEG_PATH=ffmpeg) has no file to stat: its name alone keys it.
  const stamp = (f: string): string => {
    const st = statSync(f, { throwIfNoEntry: false });
    return st ? `${f}:${st.size}:${st.mtimeMs}` : f;
  };
  const inputs = args.flatMap((a, i) => (args[i - 1] === '-i' && existsSync(a) ? [stamp(a)] : []));
  const key = createHash('sha256')
    .update(JSON.stringify([stamp(ffmpeg), inputs, args]))
    .digest('hex')
    .slice(0, 32);
  const dir = path.join(tmpdir(), 'vitals-test-clips-v1');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${key}${ext}`);
  if (process.env.VITALS_TEST_CLIP_CACHE !== 'off' && existsSync(file)) return file;
  const partial = path.join(dir, `${key}.${process.pid}.${randomBytes(4).toString('hex')}.partial${ext}`);
  try {
    await run(ffmpeg, [...args, '-y', partial], { timeout: 120_000 });
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  return file;
}
