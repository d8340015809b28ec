/**
 * The object store port (STYLE habit 4): where uploaded files live between `PUT {uploadUrl}` and the
 * end of their job. The embedded adapter is a folder under the data dir (fs-store.ts); the
 * S3-compatible adapter (s3-store.ts) implements the same calls (put streams with a size cap and
 * hashes while writing, stat, read as a stream or as bytes, a local path, delete, list what is
 * older than a time). test/objects.contract.test.ts holds both to them.
 */
import type { Readable } from 'node:stream';

export interface StoredObject {
  size: number;
  /** Lowercase hex SHA-256 of the stored bytes (computed while writing). */
  sha256: string;
  storedAt: number;
}

export class ObjectTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`object exceeds ${maxBytes} bytes`);
  }
}

export interface ObjectStore {
  /**
   * Streams `body` into the object `key`, replacing any previous version atomically. Rejects with
   * ObjectTooLargeError as soon as more than `maxBytes` have arrived (nothing is kept then).
   */
  put(key: string, body: Readable | AsyncIterable<Uint8Array>, opts: { maxBytes: number }): Promise<StoredObject>;
  stat(key: string): Promise<StoredObject | undefined>;
  read(key: string): Promise<Readable | undefined>;
  readBytes(key: string): Promise<Buffer | undefined>;
  /** A local file path for the object (tools such as ffmpeg read files), and a release function. */
  localPath(key: string): Promise<{ path: string; release(): Promise<void> } | undefined>;
  delete(key: string): Promise<void>;
  /** Keys stored before `epochMs` (the sweeper's safety net for objects whose record is gone). */
  listOlderThan(epochMs: number): Promise<string[]>;
  /** Releases connections the adapter holds (the S3 client's sockets); called once at shutdown. */
  close?(): Promise<void>;
}
