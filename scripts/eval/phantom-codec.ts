// Phantom crops through a real H.264 encoder: each 36×36 phantom crop is scaled up (bilinear) to a
// 180×180 face, the size of a ubfc2 face (140–200 px wide), placed in a 640×480 frame, the whole
// frame gets temporal sensor noise (a camera's), x264 encodes it at a given bitrate, and the
// decoded face box is scaled back to 36×36 (area average) with the original timestamps. The face
// tracker is bypassed (the cartoon face is not what a face detector is trained on), so this
// measures the codec alone, not the tracker's crop jitter.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FaceCropPacket, Packet } from '../../packages/protocol/src/index.js';
import { ffmpegPath, FF_REPRODUCIBLE, X264_REPRODUCIBLE } from './common.js';

const SIDE = 36;
const FACE = 180;
const X0 = 230;
const Y0 = 150;

function run(args: string[], input?: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath(), ['-v', 'error', '-y', ...FF_REPRODUCIBLE, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`ffmpeg ${code}: ${Buffer.concat(err).toString()}`)),
    );
    if (input) child.stdin.end(input);
    else child.stdin.end();
  });
}

/**
 * The crops of `packets` after an H.264 round trip at `kbps` (constant frame rate `fps`, the
 * phantom's). Other packet types are dropped (the phantom runs here without telemetry).
 */
export async function codecRoundTrip(packets: readonly Packet[], fps: number, kbps: number): Promise<Packet[]> {
  const crops = packets.filter((p): p is FaceCropPacket => p.type === 1);
  const raw = new Uint8Array(crops.length * SIDE * SIDE * 3);
  crops.forEach((c, i) => raw.set(c.pixels, i * SIDE * SIDE * 3));
  const dir = mkdtempSync(join(tmpdir(), 'vitals-phantom-codec-'));
  try {
    const video = join(dir, 'phantom.mp4');
    const vf = [
      `scale=${FACE}:${FACE}:flags=bilinear`,
      `pad=640:480:${X0}:${Y0}:color=0x6e7888`,
      'format=yuv420p',
      'noise=alls=3:allf=t:all_seed=5',
    ].join(',');
    const rate = `${kbps}k`;
    await run(
      [
        ...['-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${SIDE}x${SIDE}`, '-r', String(fps), '-i', 'pipe:0'],
        ...['-vf', vf, '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p', ...X264_REPRODUCIBLE],
        ...['-b:v', rate, '-maxrate', rate, '-bufsize', `${2 * kbps}k`, video],
      ],
      raw,
    );
    const back = await run([
      ...['-i', video, '-vsync', 'passthrough'],
      ...['-vf', `crop=${FACE}:${FACE}:${X0}:${Y0},scale=${SIDE}:${SIDE}:flags=area`],
      ...['-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    ]);
    const frame = SIDE * SIDE * 3;
    const n = Math.min(crops.length, Math.floor(back.length / frame));
    const out: Packet[] = [];
    for (let i = 0; i < n; i++)
      out.push({ ...crops[i], pixels: new Uint8Array(back.subarray(i * frame, (i + 1) * frame)) });
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
