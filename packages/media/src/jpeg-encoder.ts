/**
 * JPEG encoding of aux crops through one long-lived ffmpeg process per video (MJPEG encoder,
 * `-q:v 4`, about JPEG quality 80; the spec asks for 70-85). A pure-JS encoder (jpeg-js) takes
 * 60-200 ms per 448x448 image, ffmpeg about 2 ms. Images go in as raw RGB on stdin and come back
 * as a stream of JPEGs on stdout, split at their end-of-image markers.
 */
import { spawn } from 'node:child_process';

export class JpegStreamEncoder {
  private readonly child;
  private readonly results: Promise<Uint8Array>[] = [];
  private readonly resolvers: ((jpeg: Uint8Array) => void)[] = [];
  private buffer = Buffer.alloc(0);
  private failed: Error | null = null;
  private readonly done: Promise<void>;

  constructor(
    ffmpeg: string,
    readonly width: number,
    readonly height: number,
    qscale = 4,
  ) {
    const size = `${width}x${height}`;
    this.child = spawn(
      ffmpeg,
      [
        '-v',
        'error',
        '-f',
        'rawvideo',
        '-pix_fmt',
        'rgb24',
        '-s',
        size,
        '-r',
        '2',
        '-i',
        'pipe:0',
        '-c:v',
        'mjpeg',
        '-pix_fmt',
        'yuvj420p',
        '-q:v',
        String(qscale),
        '-f',
        'image2pipe',
        'pipe:1',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stderr = '';
    this.child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    this.child.stdout.on('data', (d: Buffer) => this.onData(d));
    this.child.stdin.on('error', () => undefined);
    this.done = new Promise((resolve) => {
      this.child.on('close', (code) => {
        if (this.resolvers.length) this.failed = new Error(`JPEG encoder exited (${code}): ${stderr.trim()}`);
        resolve();
      });
      this.child.on('error', (err) => {
        this.failed = err;
        resolve();
      });
    });
  }

  /** Queues one RGB image; the promise gives its JPEG. */
  encode(rgb: Uint8Array): Promise<Uint8Array> {
    if (rgb.length !== this.width * this.height * 3) throw new RangeError('image size does not match the encoder');
    const p = new Promise<Uint8Array>((resolve) => this.resolvers.push(resolve));
    this.results.push(p);
    this.child.stdin.write(rgb);
    return p;
  }

  /** Flushes and waits for every queued JPEG. */
  async finish(): Promise<Uint8Array[]> {
    this.child.stdin.end();
    await this.done;
    if (this.failed) throw this.failed;
    return Promise.all(this.results);
  }

  /** Stops the encoder without waiting (abort paths). */
  kill(): void {
    this.child.kill('SIGKILL');
  }

  private onData(d: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, d]) : Buffer.from(d);
    for (;;) {
      const end = jpegEnd(this.buffer);
      if (end < 0) return;
      const jpeg = new Uint8Array(this.buffer.subarray(0, end));
      this.buffer = this.buffer.subarray(end);
      this.resolvers.shift()?.(jpeg);
    }
  }
}

/**
 * Length of the complete JPEG at the start of `b`, or -1 while incomplete. Walks the marker
 * segments (their payloads may hold any byte) up to the scan, then the entropy-coded data, where
 * 0xFF is always followed by 0x00 (stuffing) or a restart marker until the end-of-image marker.
 */
export function jpegEnd(b: Uint8Array): number {
  if (b.length < 4) return -1;
  if (b[0] !== 0xff || b[1] !== 0xd8) throw new Error('JPEG stream out of sync');
  let i = 2;
  for (;;) {
    if (i + 4 > b.length) return -1;
    if (b[i] !== 0xff) throw new Error('JPEG stream out of sync');
    const marker = b[i + 1];
    if (marker === 0xd9) return i + 2;
    const len = (b[i + 2] << 8) | b[i + 3];
    i += 2 + len;
    if (marker === 0xda) break;
  }
  for (; i + 1 < b.length; i++) {
    if (b[i] !== 0xff) continue;
    const m = b[i + 1];
    if (m === 0x00 || (m >= 0xd0 && m <= 0xd7) || m === 0xff) continue;
    if (m === 0xd9) return i + 2;
  }
  return -1;
}
