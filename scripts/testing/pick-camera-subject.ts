/**
 * Which labelled UBFC-rPPG subject the Chromium camera test plays, and for how long (issue 15 §5,
 * docs/capture.md "The test clip"). The rule never looks at a browser result: each labelled subject
 * is converted exactly as the fake camera plays it (30 fps MJPEG), run through the Node video
 * pipeline (`videoToPackets`, the same tracker and crop as the browser) and the engine's
 * `estimateOffline`, on capture windows of the candidate length starting 0..MAX_START_SEC into the
 * clip (the camera plays while the page loads its models, so a capture starts a few seconds in).
 * A subject's figure is its worst window's quality score; the subject with the highest figure wins.
 *
 *   npx tsx scripts/testing/pick-camera-subject.ts [seconds=40,60]
 *
 * Slow (the video pipeline on every labelled clip, a few minutes on a quiet 2-core machine).
 *
 *   npx tsx scripts/testing/pick-camera-subject.ts --phases [subject=subject12] [seconds=60]
 *
 * How much one capture of the chosen clip varies with the tracking phase: the same capture tracked
 * from starting frames 0, 3, ..., 27 (a capture starts at whatever frame the camera is on when the
 * page is ready, so the analysed frames fall at another phase each time), each graded on its first
 * `seconds`. About a minute.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { estimateOffline } from '@vitals/engine';
import { resolveFfmpeg, videoToPackets } from '@vitals/media';
import type { Packet } from '@vitals/protocol';
import { REPO_ROOT } from './serve.js';

const run = promisify(execFile);
/** Capture starts considered: the camera plays for up to this long before the capture begins. */
export const MAX_START_SEC = 8;
const START_STEP_SEC = 2;

interface Item {
  id: string;
  video: string;
  referenceHeartRateBpm?: number;
}

function labelled(data: string): Item[] {
  const manifest = JSON.parse(readFileSync(path.join(data, 'MANIFEST.json'), 'utf8')) as {
    sets: { name: string; items: Item[] }[];
  };
  const set = manifest.sets.find((s) => s.name === 'ubfc2')!;
  return set.items.filter((i) => i.video && i.referenceHeartRateBpm !== undefined);
}

function windowOf(packets: Packet[], fromSec: number, seconds: number): Packet[] {
  const a = fromSec * 1e6;
  const b = (fromSec + seconds) * 1e6;
  return packets.filter((p) => p.tMicros >= a && p.tMicros < b);
}

const ffmpegArgs = (args: string[]): Promise<unknown> => run(resolveFfmpeg().ffmpeg, ['-v', 'error', '-y', ...args]);

/** The camera's file, exactly as the Chromium test makes it: the clip resampled to 30 fps MJPEG. */
async function cameraFile(data: string, item: Item, tmp: string): Promise<string> {
  const mjpeg = path.join(tmp, `${item.id}.mjpeg`);
  await ffmpegArgs(['-i', path.join(data, item.video), '-an', '-vf', 'fps=30', '-q:v', '2', '-f', 'mjpeg', mjpeg]);
  return mjpeg;
}

/**
 * The camera's frames from `startFrame` on, losslessly in H.264 (the video pipeline takes MP4/WebM
 * only), through the Node video pipeline: the frames the pipeline tracks are the camera's.
 */
async function tracked(mjpeg: string, tmp: string, startFrame: number): ReturnType<typeof videoToPackets> {
  const mp4 = path.join(tmp, `from-${startFrame}.mp4`);
  const select = startFrame > 0 ? ['-vf', `select=gte(n\\,${startFrame}),setpts=N/30/TB`] : [];
  await ffmpegArgs([
    '-f',
    'mjpeg',
    '-framerate',
    '30',
    '-i',
    mjpeg,
    ...select,
    '-c:v',
    'libx264',
    '-qp',
    '0',
    '-preset',
    'ultrafast',
    mp4,
  ]);
  try {
    return await videoToPackets(mp4, { decodeBudgetMs: 3_600_000 });
  } finally {
    rmSync(mp4, { force: true });
  }
}

/** The `--phases` run: one capture of `subject`, tracked from ten starting frames. */
async function phases(data: string, tmp: string, subject: string, seconds: number): Promise<void> {
  const item = labelled(data).find((i) => i.id === subject);
  if (!item) throw new Error(`${subject} is not a labelled ubfc2 subject`);
  const mjpeg = await cameraFile(data, item, tmp);
  console.log(`${subject}, ${seconds} s from each starting frame (reference ${item.referenceHeartRateBpm} bpm)`);
  for (let start = 0; start < 30; start += 3) {
    const r = await tracked(mjpeg, tmp, start);
    if (!r.ok) {
      console.log(`frame ${start}\tfailed ${r.code}`);
      continue;
    }
    const m = estimateOffline(windowOf(r.packets, 0, seconds));
    console.log(
      `frame ${start}\t${m.quality.level} ${m.quality.score.toFixed(2)}\tmedian SQI ${m.stats.medianSqi}\t` +
        `internal ${(m.stats.internalHeartRateBpm ?? NaN).toFixed(1)} bpm\tpublished ${m.cardiac.heartRate?.value ?? '-'}`,
    );
  }
}

async function main(): Promise<void> {
  const data = [path.resolve(REPO_ROOT, '../shared/data'), path.resolve(REPO_ROOT, '../../shared/data')].find((d) =>
    existsSync(path.join(d, 'MANIFEST.json')),
  );
  if (!data) throw new Error('../shared/data not found');
  const tmp = mkdtempSync(path.join(tmpdir(), 'vitals-pick-'));
  if (process.argv[2] === '--phases') {
    try {
      return await phases(data, tmp, process.argv[3] ?? 'subject12', Number(process.argv[4] ?? 60));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const lengths = (process.argv[2] ?? '40,60').split(',').map(Number);
  const rows: string[] = [];
  try {
    for (const item of labelled(data)) {
      const mjpeg = await cameraFile(data, item, tmp);
      const r = await tracked(mjpeg, tmp, 0);
      rmSync(mjpeg, { force: true });
      if (!r.ok) {
        rows.push(`${item.id}\tfailed ${r.code}`);
        continue;
      }
      const clipSec = r.stats.durationSec ?? 0;
      for (const seconds of lengths) {
        const scores: string[] = [];
        let worst = Infinity;
        let worstHr = '';
        for (let k = 0; k <= MAX_START_SEC && k + seconds <= clipSec; k += START_STEP_SEC) {
          const m = estimateOffline(windowOf(r.packets, k, seconds));
          scores.push(
            `${k}s:${m.quality.score.toFixed(2)}/${m.quality.level}/${(m.stats.internalHeartRateBpm ?? NaN).toFixed(1)}`,
          );
          if (m.quality.score < worst) {
            worst = m.quality.score;
            worstHr = (m.stats.internalHeartRateBpm ?? NaN).toFixed(1);
          }
        }
        const w = scores.length ? worst.toFixed(2) : 'clip too short';
        rows.push(
          `${item.id}\t${seconds}s\tworst ${w}\t(hr ${worstHr}, ref ${item.referenceHeartRateBpm})\t${scores.join(' ')}`,
        );
        console.log(rows.at(-1));
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  console.log('\n' + rows.join('\n'));
}

await main();
