/**
 * decodeFrames reads ffmpeg's output straight into the frame buffers through a Unix socket (no
 * buffer per read: docs/media.md, "A whole job through serve"); the pipe stream it falls back to
 * gives the same frames, with the same timestamps, whatever the consumer keeps or gives back.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeFrames, directSource, FramePool, readFrameTimes } from '../src/decode.js';
import { resolveFfmpeg } from '../src/ffmpeg.js';
import { i420Bytes } from '../src/yuv.js';
import { makeClip, tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

async function frames(file: string, direct: boolean, pixFmt: 'rgb24' | 'yuv420p', give: boolean) {
  const { ffmpeg, ffprobe } = resolveFfmpeg();
  const times = await readFrameTimes(ffprobe, file);
  const pool = new FramePool(pixFmt === 'rgb24' ? 320 * 240 * 3 : i420Bytes(320, 240));
  const out: { index: number; tSec: number; sha: string }[] = [];
  const opts = { width: 320, height: 240, scale: false, pixFmt, nominalFps: 30, times, pool, direct };
  for await (const f of decodeFrames(ffmpeg, file, opts)) {
    out.push({ index: f.index, tSec: f.tSec, sha: createHash('sha256').update(f.data).digest('hex') });
    if (give) pool.give(f.data);
  }
  return out;
}

describe('decodeFrames', () => {
  it('gives the same frames through the socket and through the pipe', async () => {
    const file = await makeClip(path.join(tmp.dir, 'pattern.mp4'), { seconds: 3, fps: 30, background: 'testsrc' });
    for (const pixFmt of ['rgb24', 'yuv420p'] as const) {
      const viaPipe = await frames(file, false, pixFmt, true);
      expect(viaPipe).toHaveLength(90);
      expect(new Set(viaPipe.map((f) => f.sha)).size).toBeGreaterThan(1);
      expect(await frames(file, true, pixFmt, true)).toEqual(viaPipe);
      expect(await frames(file, true, pixFmt, false)).toEqual(viaPipe);
    }
  });

  it('stops ffmpeg when the consumer stops early', async () => {
    // Long enough that ffmpeg is still writing (held back by the paused socket) when the loop ends.
    const file = await makeClip(path.join(tmp.dir, 'early.mp4'), { seconds: 20, fps: 30 });
    const { ffmpeg, ffprobe } = resolveFfmpeg();
    const times = await readFrameTimes(ffprobe, file);
    let n = 0;
    for await (const f of decodeFrames(ffmpeg, file, {
      width: 320,
      height: 240,
      scale: false,
      nominalFps: 30,
      times,
    })) {
      expect(f.index).toBe(n++);
      if (n === 3) break;
    }
    expect(n).toBe(3);
    // No ffmpeg child of this process is left (Linux: the kernel lists each thread's children).
    if (existsSync('/proc/self/task')) {
      const comm = (pid: string): string => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
        } catch {
          return ''; // already gone
        }
      };
      const ffmpegChildren = (): string[] =>
        readdirSync('/proc/self/task')
          .flatMap((t) => readFileSync(`/proc/self/task/${t}/children`, 'utf8').trim().split(/\s+/))
          .filter((pid) => pid && comm(pid) === 'ffmpeg');
      const until = Date.now() + 10_000;
      while (ffmpegChildren().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(ffmpegChildren()).toEqual([]);
    }
  });

  it.skipIf(process.platform === 'win32')('reads the socket into the buffers it is given', async () => {
    const bufs = [new Uint8Array(5), new Uint8Array(5)];
    let next = 0;
    const got: number[] = [];
    const { sink, source } = await directSource({
      buffer: () => bufs[next],
      callback: (n, buf) => {
        expect(buf.buffer).toBe(bufs[next].buffer);
        got.push(...buf.subarray(0, n));
        next ^= 1;
        return true;
      },
    });
    const ended = new Promise((resolve) => source.on('end', resolve));
    sink.end(Buffer.from([1, 2, 3, 4, 5, 6, 7]));
    await ended;
    source.destroy();
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});
