/** File helpers for Node: stream a file to an upload, hash it, read and write frames files. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import type { FramesHeader, Packet } from '@vitals/protocol';
import { readFramesFile, type FramesWriter } from '../core/frames/frames-file.js';
import type { StreamSource } from '../core/http/upload.js';

/** A sized source reading the file in chunks: pass it to `uploads.put`. */
export async function fileSource(path: string): Promise<StreamSource> {
  const { size } = await stat(path);
  return {
    size,
    async *stream() {
      for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) {
        yield new Uint8Array((chunk as Buffer).buffer, (chunk as Buffer).byteOffset, (chunk as Buffer).byteLength);
      }
    },
  };
}

/** Lowercase-hex SHA-256 of a file, streamed (a 256 MB video is never held in memory). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function readFramesFileFromDisk(path: string): Promise<{ header: FramesHeader; packets: Packet[] }> {
  const bytes = await readFile(path);
  return readFramesFile(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

export async function writeFramesFileToDisk(path: string, frames: FramesWriter | Uint8Array): Promise<void> {
  await writeFile(path, frames instanceof Uint8Array ? frames : frames.toBytes());
}
