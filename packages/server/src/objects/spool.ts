/**
 * Streams an upload into a new local file while counting and hashing it: the one place the size cap
 * ("reject as soon as more than maxBytes arrived") and the SHA-256 of the stored bytes are enforced.
 * The filesystem adapter renames the file into place; the S3 adapter sends it with a known length.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { once } from 'node:events';
import { ObjectTooLargeError } from './object-store.js';

/** Object keys are ours (`up_…`); anything else is refused before it reaches a path or a bucket. */
export const KEY_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export function checkKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new Error('invalid object key');
  return key;
}

/**
 * Writes `body` to `file` (which must not exist). On any failure, the size cap included, the
 * partial file is removed before the error is rethrown.
 */
export async function spoolToFile(
  file: string,
  body: Readable | AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  const out = fs.createWriteStream(file, { flags: 'wx' });
  // A listener for the stream's whole life: a write still in flight when the upload is cut short
  // (size cap, client gone) fails after destroy(), and an unheard 'error' would crash the process.
  let streamError: Error | null = null;
  out.on('error', (err) => {
    streamError ??= err;
  });
  try {
    for await (const chunk of body) {
      const buf = chunk as Uint8Array;
      size += buf.length;
      if (size > maxBytes) throw new ObjectTooLargeError(maxBytes);
      hash.update(buf);
      if (!out.write(buf)) await once(out, 'drain');
      if (streamError) throw streamError;
    }
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    return { size, sha256: hash.digest('hex') };
  } catch (err) {
    if (!out.closed) {
      const closed = once(out, 'close').catch(() => undefined);
      out.destroy();
      await closed;
    }
    await fsp.rm(file, { force: true });
    throw err;
  }
}

/** Hex SHA-256 of a stream (an object stored without its hash, by someone else). */
export async function sha256Of(stream: AsyncIterable<unknown>): Promise<string> {
  const h = createHash('sha256');
  for await (const c of stream) h.update(c as Uint8Array);
  return h.digest('hex');
}
