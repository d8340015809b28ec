/**
 * `vitals measure` refuses an MP4 or MOV over the service's hour before uploading it, from the
 * length its movie header declares (src/mp4-duration.ts); files that do not say are left to the
 * service. Real files made by ffmpeg.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveFfmpeg } from '@vitals/media';
import { mp4DurationSec } from '../src/mp4-duration.js';
import { credsEnv, runVitals } from './support/run.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'vitals-cli-mp4-'));
const at = (name: string): string => join(dir, name);
const ffmpeg = (args: string[]) => run(resolveFfmpeg().ffmpeg, ['-v', 'error', '-y', ...args]);
const SOURCE = [
  '-f',
  'lavfi',
  '-i',
  'testsrc=size=160x120:rate=10:duration=21',
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
];

beforeAll(async () => {
  await ffmpeg([...SOURCE, at('moov-at-end.mp4')]);
  await ffmpeg([...SOURCE, '-movflags', '+faststart', at('moov-first.mp4')]);
  await ffmpeg([...SOURCE, at('clip.mov')]);
  // 62 minutes without a re-encode: the 21 s clip repeated (the header says ~3720 s).
  await ffmpeg(['-stream_loop', '176', '-i', at('moov-first.mp4'), '-c', 'copy', at('62-min.mp4')]);
  await ffmpeg([...SOURCE, '-c:v', 'libvpx', '-deadline', 'realtime', at('clip.webm')]);
  writeFileSync(at('text.mp4'), 'this is not a video\n'.repeat(100));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the length an MP4 or MOV declares', () => {
  it.each(['moov-at-end.mp4', 'moov-first.mp4', 'clip.mov'])('%s: 21 s', async (name) => {
    expect(await mp4DurationSec(at(name))).toBeCloseTo(21, 1);
  });

  it('a stream-looped 62-minute MP4', async () => {
    expect((await mp4DurationSec(at('62-min.mp4')))! / 60).toBeCloseTo(62, 0);
  });

  it.each(['clip.webm', 'text.mp4', 'missing.mp4'])('%s: null (left to the service)', async (name) => {
    expect(await mp4DurationSec(at(name))).toBeNull();
  });
});

describe('vitals measure', () => {
  // No server listens on port 1: a command that got as far as a call would fail otherwise (not exit 2).
  const nowhere = credsEnv({ keyId: 'k', secret: 's' }, 'http://127.0.0.1:1');

  it('a 62-minute MP4: exit 2 before any call, saying how long it is and the limit', async () => {
    const minutes = (await mp4DurationSec(at('62-min.mp4')))! / 60;
    const r = await runVitals(['measure', at('62-min.mp4'), '--consent'], nowhere);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `lasts ${minutes.toFixed(1)} min; videos are measured up to 60 min: cut out the part to measure`,
    );
  });

  it('a 21 s MP4 passes the local checks (it then fails to reach the service, exit 1)', async () => {
    const r = await runVitals(['measure', at('moov-first.mp4'), '--consent'], nowhere);
    expect(r.code).not.toBe(2);
  });
});
