/**
 * Streams decoded frames out of ffmpeg, read straight into pooled frame buffers through a Unix
 * socket (`directSource`; a pipe where none can be made), at most one whole frame read ahead plus
 * the one being filled and whatever the consumer holds. Each frame carries its presentation timestamp from the container:
 * ffprobe lists the video packets' timestamps (demuxing only, no decode), sorted into presentation
 * order; ffmpeg decodes with `-vsync passthrough`, so no frame is duplicated or dropped to fit a
 * nominal rate and the n-th frame out is the n-th timestamp. Variable frame rate is kept as is.
 * (The `showinfo` filter would give the same timestamps but costs more than the decode itself.)
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { i420Bytes } from './yuv.js';

export interface DecodedFrame {
  /** Index among decoded frames, from 0. */
  index: number;
  /** Presentation time in seconds, as in the container (not rebased). */
  tSec: number;
  /**
   * Interleaved RGB, `width * height * 3` bytes (with `pixFmt` yuv420p: the I420 planes, Y then U
   * and V). Owned by the consumer (may go back to the pool).
   */
  data: Uint8Array;
  width: number;
  height: number;
}

export interface DecodeOptions {
  /** Output size; ffmpeg scales to it when it differs from the source. */
  width: number;
  height: number;
  /** Whether to scale (set when width/height are a reduced size). */
  scale: boolean;
  /**
   * Pixel format out of ffmpeg: rgb24 (default) or yuv420p, the decoder's own for most H.264 (no
   * conversion in ffmpeg, half the bytes through the pipe; yuv.ts converts what is used).
   */
  pixFmt?: 'rgb24' | 'yuv420p';
  /** Fallback spacing when a timestamp is missing. */
  nominalFps: number;
  /** Presentation timestamps from `readFrameTimes`; missing ones are extrapolated. */
  times: number[];
  /** Decoder threads (default DECODE_THREADS). */
  threads?: number;
  /** Where frame buffers come from; the consumer may give them back. */
  pool?: FramePool;
  /**
   * Read ffmpeg's output straight into the frame buffers through a Unix socket (default; see
   * `directSource`). `false`: through a pipe stream, a new 64 KiB buffer per read (the fallback
   * where no socket can be made; same frames).
   */
  direct?: boolean;
  signal?: AbortSignal;
}

export class DecodeError extends Error {}

/** Reuses frame buffers the consumer has finished with (saves ~1 s of GC per minute of video). */
export class FramePool {
  private readonly free: Uint8Array[] = [];
  constructor(readonly bytes: number) {}
  take(): Uint8Array {
    return this.free.pop() ?? new Uint8Array(this.bytes);
  }
  give(buf: Uint8Array): void {
    if (buf.length === this.bytes && this.free.length < 16) this.free.push(buf);
  }
}

/**
 * The largest single allocation ffmpeg and ffprobe may make: 64 MiB holds any plane of a frame within
 * the probe's caps (rules.ts, 4096 x 3072) with room to spare, and stops a 16000 x 16000 frame
 * before its buffers exist (ffprobe peaked at 855 MB on one; with the bound, about 110 MB).
 */
export const FFMPEG_MAX_ALLOC = 64 * 1024 * 1024;
export const FFMPEG_BOUNDS = ['-max_alloc', String(FFMPEG_MAX_ALLOC)];
/** Decoder threads per job for large videos (ffmpeg's default is one per core, each holding frames). */
export const DECODE_THREADS = 4;
/**
 * Up to this many source pixels a frame (1280x720) one decoder thread: face analysis, not the
 * decode, sets the pace, and frame threads on a busy core only add switching (docs/media.md).
 */
export const ONE_THREAD_MAX_PIXELS = 1280 * 720;

/** Presentation timestamps (seconds) of the first video stream's packets, ascending. */
export function readFrameTimes(ffprobe: string, file: string): Promise<number[]> {
  const args = [
    '-v',
    'error',
    ...FFMPEG_BOUNDS,
    '-select_streams',
    'v:0',
    '-show_entries',
    'packet=pts_time,flags',
    '-of',
    'csv=p=0',
    file,
  ];
  return new Promise((resolve) => {
    execFile(ffprobe, args, { timeout: 120_000, maxBuffer: 64 << 20 }, (err, stdout) => {
      if (err) return resolve([]);
      const times: number[] = [];
      for (const line of stdout.split('\n')) {
        const [pts, flags = ''] = line.split(',');
        // Packets the demuxer marks for discard (edit lists) never come out of the decoder.
        if (!pts || flags.includes('D')) continue;
        const t = Number(pts);
        if (Number.isFinite(t)) times.push(t);
      }
      resolve(times.sort((a, b) => a - b));
    });
  });
}

/**
 * A connected pair of Unix stream sockets: `sink` to hand to ffmpeg as its stdout, `source` read
 * with `onread`, so each read lands in the buffer `onread.buffer()` returns. Through a pipe stream
 * every read is a new 64 KiB buffer (about 13,000 a minute of 640x480 video); V8 counts their bytes
 * as external memory allocated since the last full GC, and on a heap whose limit was set low (a
 * worker's second video) that starts a full mark-compact every few hundred ms: about 50 in a
 * minute of video, 1-2 s of CPU on V8's GC threads (docs/media.md, "A whole job through serve").
 * The socket's path lives in a fresh private directory for as long as the connection takes, then
 * both are removed. Rejects where no such socket can be made (Windows named pipes cannot be a
 * child's stdout): the caller reads through a pipe instead.
 */
export async function directSource(onread: net.OnReadOpts): Promise<{ sink: net.Socket; source: net.Socket }> {
  if (process.platform === 'win32') throw new Error('no Unix sockets');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'vitals-decode-'));
  const server = net.createServer();
  let source: net.Socket | undefined;
  try {
    const file = path.join(dir, 'out');
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(file, resolve);
    });
    const accepted = new Promise<net.Socket>((resolve, reject) => {
      server.once('connection', resolve);
      server.once('error', reject);
    });
    const client = (source = net.connect({ path: file, onread }));
    await new Promise<void>((resolve, reject) => {
      client.once('connect', resolve);
      client.once('error', reject);
    });
    return { sink: await accepted, source: client };
  } catch (err) {
    source?.destroy();
    throw err;
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function* decodeFrames(ffmpeg: string, file: string, opts: DecodeOptions): AsyncGenerator<DecodedFrame> {
  // Bounded per job (issue 19): at most DECODE_THREADS frames in flight whatever the machine's core
  // count, and no single allocation over FFMPEG_MAX_ALLOC (a frame past the probe's caps fails).
  const args = [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    ...FFMPEG_BOUNDS,
    '-threads',
    String(opts.threads ?? DECODE_THREADS),
  ];
  args.push('-i', file, '-map', '0:v:0', '-an', '-sn', '-dn');
  if (opts.scale) args.push('-vf', `scale=${opts.width}:${opts.height}:flags=area`);
  const pixFmt = opts.pixFmt ?? 'rgb24';
  args.push('-vsync', 'passthrough', '-f', 'rawvideo', '-pix_fmt', pixFmt, 'pipe:1');

  const frameBytes = pixFmt === 'rgb24' ? opts.width * opts.height * 3 : i420Bytes(opts.width, opts.height);
  const pool = opts.pool ?? new FramePool(frameBytes);
  let frame = pool.take();
  let filled = 0;
  // Whole frames read and not yet yielded (reading pauses while one waits), and the end of output.
  const ready: Uint8Array[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const completed = (): void => {
    ready.push(frame);
    frame = pool.take();
    filled = 0;
  };
  const tail: string[] = [];
  let readError: unknown;

  const direct =
    opts.direct === false
      ? undefined
      : await directSource({
          buffer: () => frame.subarray(filled),
          callback: (n) => {
            filled += n;
            if (filled === frameBytes) completed();
            notify();
            return ready.length === 0; // false pauses the socket until the frame is taken
          },
        }).catch(() => undefined);

  const child = spawn(ffmpeg, args, { stdio: ['ignore', direct?.sink ?? 'pipe', 'pipe'] });
  // ffmpeg holds its own copy of the socket: ours would keep the output from ever ending.
  direct?.sink.destroy();
  const output: Readable = direct?.source ?? child.stdout!;
  const onEnd = (): void => {
    ended = true;
    notify();
  };
  output.on('end', onEnd);
  output.on('close', onEnd);
  output.on('error', (err) => {
    readError ??= err;
    onEnd();
  });
  if (!direct)
    output.on('data', (chunk: Buffer) => {
      let off = 0;
      while (off < chunk.length) {
        const n = Math.min(frameBytes - filled, chunk.length - off);
        frame.set(chunk.subarray(off, off + n), filled);
        filled += n;
        off += n;
        if (filled === frameBytes) completed();
      }
      if (ready.length) output.pause();
      notify();
    });

  let exited = false;
  let exitCode: number | null = null;
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    tail.push(chunk);
    if (tail.length > 20) tail.shift();
  });
  const closed = new Promise<void>((resolve) => {
    child.on('close', (code) => {
      exited = true;
      exitCode = code;
      resolve();
    });
    child.on('error', (err) => {
      exited = true;
      tail.push(String(err));
      resolve();
    });
  });
  const onAbort = (): void => {
    child.kill('SIGKILL');
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  let index = 0;
  let lastT = NaN;
  const timeOf = (i: number): number => {
    const t = opts.times[i];
    if (t !== undefined && (i === 0 || t > lastT)) return t;
    return Number.isFinite(lastT) ? lastT + 1 / opts.nominalFps : 0;
  };
  try {
    for (;;) {
      const data = ready.shift();
      if (!data) {
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      output.resume();
      const tSec = timeOf(index);
      lastT = tSec;
      yield { index, tSec, data, width: opts.width, height: opts.height };
      index++;
    }
    if (readError) throw readError;
    await closed;
    opts.signal?.throwIfAborted();
    if (index === 0)
      throw new DecodeError(
        `ffmpeg decoded no frame (exit ${exitCode}): ${tail.join('').trim().split('\n').slice(-3).join(' | ')}`,
      );
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    if (!exited) child.kill('SIGKILL');
    direct?.source.destroy();
  }
}
