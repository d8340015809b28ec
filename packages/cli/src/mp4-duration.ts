/**
 * The length an MP4 or QuickTime file declares (its `mvhd` box: duration / timescale), read from
 * the box headers without loading the file, so `vitals measure` can refuse a video the service would
 * refuse (longer than VIDEO_MAX_DURATION_SEC) before uploading up to 256 MB of it. `null` when the
 * file does not say (not an ISO base media file, no `moov` found, a damaged box): the service then
 * judges it, as it judges every file.
 */
import { open, type FileHandle } from 'node:fs/promises';

/** A `moov` larger than this is not read (a real one is a few hundred KB even for an hour). */
const MAX_MOOV_BYTES = 64 << 20;

async function readAt(f: FileHandle, position: number, length: number): Promise<Buffer | null> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await f.read(buf, 0, length, position);
  return bytesRead === length ? buf : null;
}

/** The box at `pos`: its type, where its content starts and where it ends; null past the end or when damaged. */
async function boxAt(
  f: FileHandle,
  pos: number,
  end: number,
): Promise<{ type: string; content: number; next: number } | null> {
  if (pos + 8 > end) return null;
  const head = await readAt(f, pos, 8);
  if (!head) return null;
  let size = head.readUInt32BE(0);
  const type = head.toString('latin1', 4, 8);
  let content = pos + 8;
  if (size === 1) {
    const large = await readAt(f, pos + 8, 8);
    if (!large) return null;
    size = Number(large.readBigUInt64BE(0));
    content = pos + 16;
  } else if (size === 0) size = end - pos; // to the end of the file
  if (size < content - pos || pos + size > end) return null;
  return { type, content, next: pos + size };
}

/** Seconds the file's movie header declares, or null when it cannot be read. */
export async function mp4DurationSec(path: string): Promise<number | null> {
  let f: FileHandle | undefined;
  try {
    f = await open(path, 'r');
    const end = (await f.stat()).size;
    for (let pos = 0, boxes = 0; boxes < 1000; boxes++) {
      const box = await boxAt(f, pos, end);
      if (!box) return null;
      if (box.type === 'moov') {
        if (box.next - box.content > MAX_MOOV_BYTES) return null;
        for (let p = box.content, inner = 0; inner < 1000; inner++) {
          const child = await boxAt(f, p, box.next);
          if (!child) return null;
          if (child.type === 'mvhd') return readMvhd(await readAt(f, child.content, 32));
          p = child.next;
        }
        return null;
      }
      pos = box.next;
    }
    return null;
  } catch {
    return null;
  } finally {
    await f?.close();
  }
}

/** `mvhd` version 0: 4-byte times, timescale at 12, duration at 16; version 1: 8-byte times, at 20 and 24. */
function readMvhd(b: Buffer | null): number | null {
  if (!b) return null;
  const v1 = b[0] === 1;
  const timescale = b.readUInt32BE(v1 ? 20 : 12);
  const duration = v1 ? Number(b.readBigUInt64BE(24)) : b.readUInt32BE(16);
  if (timescale === 0 || (!v1 && duration === 0xffffffff)) return null; // unknown duration
  return duration / timescale;
}
