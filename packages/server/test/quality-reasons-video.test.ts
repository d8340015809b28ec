/**
 * Quality reasons from real video (issue 17): a 21 s cut of a labelled ubfc2 recording, degraded on
 * purpose with ffmpeg (encoded once, cached in the OS temp dir), through the video path a job takes
 * (media's videoToPackets, the source statistics process.ts passes, the offline estimator). Each
 * degradation must produce its reason; the clean re-encode only the reason that truly applies to 21 s
 * with nothing published.
 * About 5 s of CPU per clip (the video path costs ~13 s per minute of video).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateOffline } from '@vitals/engine';
import { videoToPackets } from '@vitals/media';
import { ffmpegCached } from '../../../scripts/testing/ffmpeg-cached.js';
import { videoCaptureSource } from '../src/domain/measurement-fields.js';

const REPO = path.resolve(import.meta.dirname, '../../..');
const DATA = [path.resolve(REPO, '../shared/data'), path.resolve(REPO, '../../shared/data')].find((d) =>
  existsSync(path.join(d, 'ubfc2/subject10/vid.mp4')),
);
if (!DATA) console.warn('\n*** SKIPPED: quality reasons on real video: ../shared/data/ubfc2 not found ***\n');

const HIGH_QUALITY = ['-crf', '18'];
/** ffmpeg arguments of each degradation (video filter or encoder settings). */
const CLIPS: Record<string, string[]> = {
  clean: HIGH_QUALITY,
  // A fifth of the light.
  dark: ['-vf', 'lutrgb=r=val*0.2:g=val*0.2:b=val*0.2', ...HIGH_QUALITY],
  // 2.2 times the exposure: the face clips.
  bright: ['-vf', 'lutrgb=r=val*2.2:g=val*2.2:b=val*2.2', ...HIGH_QUALITY],
  // A hand-held camera: the picture sways by ±20 px at 0.6 Hz and ±15 px at 0.4 Hz.
  shaken: ['-vf', "crop=600:450:x='20+20*sin(2*PI*0.6*t)':y='15+15*sin(2*PI*0.4*t)',scale=640:480", ...HIGH_QUALITY],
  // 25 kbit/s for 640x480 at 30 fps (0.0026 bit per pixel; the original is 0.019).
  compressed: ['-b:v', '25k', '-maxrate', '25k', '-bufsize', '50k'],
  // Brightness ±2 % of full scale at 10 Hz: 100 Hz mains lighting seen by a 30 fps camera.
  flicker: ['-vf', "eq=eval=frame:brightness='0.02*sin(2*PI*10*t)'", ...HIGH_QUALITY],
  // The face gone for 3 s (a black frame), under the rejection's 70 % presence.
  faceLost: ['-vf', "drawbox=x=0:y=0:w=iw:h=ih:color=black:t=fill:enable='between(t,8,11)'", ...HIGH_QUALITY],
};

async function reasonsOf(name: string): Promise<{ codes: string[]; values: Record<string, number | undefined> }> {
  const src = path.join(DATA!, 'ubfc2/subject10/vid.mp4');
  const args = ['-v', 'error', '-ss', '5', '-t', '21', '-i', src, '-an', '-c:v', 'libx264', '-preset', 'veryfast'];
  // The degraded clip is encoded once per machine (keyed by these arguments and the source) and
  // reused; the video path and the estimator run on it every time.
  const out = await ffmpegCached([...args, '-pix_fmt', 'yuv420p', ...CLIPS[name]], '.mp4');
  const res = await videoToPackets(out, {});
  if (!res.ok) throw new Error(`${name}: ${res.code} ${res.message}`);
  const m = estimateOffline(res.packets, { source: videoCaptureSource(res.stats) });
  const reasons = m.quality.reasons;
  return { codes: reasons.map((r) => r.code), values: Object.fromEntries(reasons.map((r) => [r.code, r.value])) };
}

// No database is involved: the PostgreSQL pass of the server tests (.ci/run) does not repeat it.
describe.skipIf(!DATA || !!process.env.VITALS_TEST_DATABASE_URL)(
  'quality reasons from degraded ubfc2 video',
  { timeout: 120_000 },
  () => {
    it('the clean re-encode: only too_short (21 s, nothing published)', async () => {
      const r = await reasonsOf('clean');
      expect(r.codes.filter((c) => c !== 'too_short')).toEqual([]);
    });
    it.each<[string, string]>([
      ['dark', 'low_light'],
      ['bright', 'overexposed'],
      ['shaken', 'motion'],
      ['compressed', 'compression'],
      ['flicker', 'flicker'],
      ['faceLost', 'face_lost'],
    ])('%s → %s', async (clip, code) => {
      const r = await reasonsOf(clip);
      expect(r.codes).toContain(code);
      // Each degradation gives its own reason, not every other one.
      for (const other of ['low_light', 'overexposed', 'motion', 'flicker', 'face_lost'])
        if (other !== code) expect(r.codes, `${clip}: ${r.codes.join(',')}`).not.toContain(other);
      if (code === 'flicker') expect(r.values.flicker).toBeCloseTo(10, 0);
    });
  },
);
