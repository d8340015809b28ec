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

async function main(): Promise<void> {
  const lengths = (process.argv[2] ?? '40,60').split(',').map(Number);
  const data = [path.resolve(REPO_ROOT, '../shared/data'), path.resolve(REPO_ROOT, '../../shared/data')].find((d) =>
    existsSync(path.join(d, 'MANIFEST.json')),
  );
  if (!data) throw new Error('../shared/data not found');
  const tmp = mkdtempSync(path.join(tmpdir(), 'vitals-pick-'));
  const { ffmpeg } = resolveFfmpeg();
  const rows: string[] = [];
  try {
    for (const item of labelled(data)) {
      // The camera's file (30 fps MJPEG), then its decoded frames losslessly in H.264 (the video
      // pipeline takes MP4/WebM only): the frames the pipeline tracks are the camera's.
      const mjpeg = path.join(tmp, `${item.id}.mjpeg`);
      const mp4 = path.join(tmp, `${item.id}.mp4`);
      await run(ffmpeg, [
        '-v',
        'error',
        '-y',
        '-i',
        path.join(data, item.video),
        '-an',
        '-vf',
        'fps=30',
        '-q:v',
        '2',
        '-f',
        'mjpeg',
        mjpeg,
      ]);
      await run(ffmpeg, [
        '-v',
        'error',
        '-y',
        '-f',
        'mjpeg',
        '-framerate',
        '30',
        '-i',
        mjpeg,
        '-c:v',
        'libx264',
        '-qp',
        '0',
        '-preset',
        'ultrafast',
        mp4,
      ]);
      rmSync(mjpeg, { force: true });
      const r = await videoToPackets(mp4, { decodeBudgetMs: 3_600_000 });
      rmSync(mp4, { force: true });
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
