/**
 * Videos on worker threads (src/pool/video-pool.ts; issue 17 §1, issue 18 target 2): several real
 * UBFC-rPPG cuts processed at once by the pool give byte-identical packets to each run alone on
 * the main thread, whatever ran beside them or before them in the same worker; an aborted video
 * stops its ffmpeg and the pool carries on.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import {
  createAuxAnalyzer,
  createVideoPool,
  encodePacket,
  resolveFfmpeg,
  videoToPackets,
  type VideoPool,
  type VideoResult,
} from '../src/index.js';
import { cutReal, HAS_UBFC, makeClip, SHARED_DATA, tempDir } from './helpers.js';

const tmp = tempDir();
let pool: VideoPool;
afterAll(async () => {
  await pool?.close();
  tmp.cleanup();
});

/** sha256 over every packet's wire bytes in order, the packet count and the stats. */
function digest(r: VideoResult): string {
  if (!r.ok) return `${r.code}: ${r.message}`;
  const h = createHash('sha256');
  for (const p of r.packets) h.update(encodePacket(p));
  return `${h.digest('hex')} n=${r.packets.length} ${JSON.stringify(r.stats)}`;
}

/** Child processes of this process whose command is ffmpeg (the workers' decoders). */
function ffmpegChildren(): number {
  try {
    const out = execFileSync('ps', ['-o', 'comm=', '--ppid', String(process.pid)], { encoding: 'utf8' });
    return out.split('\n').filter((c) => c.includes('ffmpeg')).length;
  } catch {
    return 0; // ps exits 1 when there is no child
  }
}

describe.skipIf(!HAS_UBFC)('video pool: the same packets under concurrency (UBFC-rPPG, 21 s cuts)', () => {
  const subjects = ['subject3', 'subject4', 'subject5'];
  let clips: string[];
  const alone: string[] = [];
  beforeAll(async () => {
    clips = await Promise.all(
      subjects.map((s) => cutReal(path.join(SHARED_DATA, 'ubfc2', s, 'vid.mp4'), path.join(tmp.dir, `${s}.mp4`), 21)),
    );
    // Each alone, one after the other, on the main thread (no pool): the reference.
    for (const c of clips) alone.push(digest(await videoToPackets(c)));
    pool = createVideoPool({ size: 2 });
  }, 240_000);

  it('gives each video the packets of its lone run, with more videos than workers at once', async () => {
    for (const d of alone) expect(d).toMatch(/^[0-9a-f]{64} n=/); // every cut has a face
    // Three at once on two workers: two run side by side, the third waits and reuses a worker's models.
    const all = clips;
    const progress = all.map(() => [] as number[]);
    const got = await Promise.all(all.map((c, i) => pool.run(c, { onProgress: (f) => progress[i].push(f) })));
    expect(got.map(digest)).toEqual(alone);
    for (const p of progress) expect(p.at(-1)).toBe(1);
  }, 300_000);

  it('hands out the aux JPEGs as it makes them: the images the packets carry, in order', async () => {
    const handed: Uint8Array[] = [];
    const r = await pool.run(clips[0], { aux: true, onAux: (jpeg) => handed.push(jpeg) });
    if (!r.ok) throw new Error(r.message);
    // The type-4 chunks of each image (one tMicros), in time order, concatenated.
    const sets = new Map<number, Uint8Array[]>();
    for (const p of r.packets)
      if (p.type === 4) (sets.get(p.tMicros) ?? sets.set(p.tMicros, []).get(p.tMicros)!)[p.chunkIndex] = p.payload;
    const images = [...sets.values()].map((parts) => Buffer.concat(parts));
    expect(images.length).toBeGreaterThan(30); // 2 a second over 21 s
    expect(handed.map((j) => Buffer.from(j))).toEqual(images);
  }, 120_000);

  it('aborts a video: rejects with the reason, its ffmpeg ends, the next video is unchanged', async () => {
    const ac = new AbortController();
    const reason = new Error('job cancelled');
    let started!: () => void;
    const decoding = new Promise<void>((r) => (started = r));
    const run = expect(pool.run(clips[1], { onProgress: () => started() }, ac.signal)).rejects.toBe(reason);
    await decoding;
    ac.abort(reason);
    await run;
    for (let i = 0; i < 50 && ffmpegChildren() > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(ffmpegChildren()).toBe(0);
    expect(digest(await pool.run(clips[1]))).toBe(alone[1]);
  }, 120_000);
});

describe.skipIf(!HAS_UBFC)('video pool: aux analysis on a worker', () => {
  it('gives the analyses and capabilities of the main-thread aux analyzer, as one series', async () => {
    // Two 448x448 face JPEGs from a real recording, as a job's aux crops are.
    const images = [1, 5].map((sec) => {
      const out = path.join(tmp.dir, `aux-${sec}.jpg`);
      execFileSync(resolveFfmpeg().ffmpeg, [
        ...['-v', 'error', '-y', '-ss', String(sec), '-i', path.join(SHARED_DATA, 'ubfc2/subject3/vid.mp4')],
        ...['-frames:v', '1', '-vf', 'crop=300:300:170:60,scale=448:448', '-q:v', '4', out],
      ]);
      return new Uint8Array(readFileSync(out));
    });
    const p = createVideoPool({ size: 1 });
    try {
      const threaded = await p.analyzeAux(images);
      const analyzer = await createAuxAnalyzer();
      const series = analyzer.series!();
      const inline = [];
      for (const img of images) inline.push(await series.analyze(img));
      expect(threaded).toEqual(inline);
      expect(threaded[0].emotion).toHaveLength(8);
      expect(await p.auxCapabilities()).toEqual({ emotion: analyzer.emotionAvailable, gaze: analyzer.gazeAvailable });
    } finally {
      await p.close();
    }
  }, 120_000);
});

describe('video pool: rejections come back as results', () => {
  it('answers a video rejection from the worker like videoToPackets', async () => {
    const clip = await makeClip(path.join(tmp.dir, 'short.mp4'), { seconds: 3, fps: 30 });
    const p = createVideoPool({ size: 1 });
    try {
      const r = await p.run(clip);
      expect(r).toMatchObject({ ok: false, code: 'too_short' });
      expect(r).toEqual(await videoToPackets(clip));
    } finally {
      await p.close();
    }
  }, 60_000);
});
