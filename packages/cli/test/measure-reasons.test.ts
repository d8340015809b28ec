/**
 * `vitals measure` prints the quality reasons' hints (issue 17): a real face video darkened on
 * purpose (a 21 s cut of ubfc2 subject10 at a fifth of its light, made with ffmpeg at test time)
 * goes through the real server's video path and the summary lists what to change.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFfmpeg } from '@vitals/media';
import { QUALITY_REASON_HINTS } from '@vitals/protocol';
import { startTestServer } from '@vitals/server/testing';
import { credsEnv, runVitals } from './support/run.js';

/** ../shared/data beside the checkout (a git worktree sits one level deeper: ../../shared/data). */
const FACE_VIDEO =
  ['../../../../shared/data', '../../../../../shared/data']
    .map((d) => new URL(`${d}/ubfc2/subject10/vid.mp4`, import.meta.url).pathname)
    .find((f) => existsSync(f)) ?? '';

describe.skipIf(!FACE_VIDEO)('vitals measure: quality reasons', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  let dir: string;
  beforeAll(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'vitals-measure-reasons-'));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a dark video: the summary lists the hints of its reasons', { timeout: 300_000 }, async () => {
    const video = join(dir, 'dark.mp4');
    await promisify(execFile)(resolveFfmpeg().ffmpeg, [
      ...['-v', 'error', '-ss', '5', '-t', '21', '-i', FACE_VIDEO, '-an', '-c:v', 'libx264', '-preset', 'veryfast'],
      ...['-pix_fmt', 'yuv420p', '-crf', '18', '-vf', 'lutrgb=r=val*0.2:g=val*0.2:b=val*0.2', '-y', video],
    ]);
    const key = await server.createKey();
    const r = await runVitals(['measure', video, '--consent'], credsEnv(key, server.baseUrl));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/To improve the next capture:/);
    expect(r.stdout).toContain(`${QUALITY_REASON_HINTS.low_light} (low_light)`);
    // --json carries the codes as stored.
    const j = await runVitals(['measure', video, '--consent', '--json'], credsEnv(key, server.baseUrl));
    const m = JSON.parse(j.stdout) as { measurement?: { quality: { reasons: { code: string }[] } } };
    expect(JSON.stringify(m)).toContain('"code":"low_light"');
  });
});
