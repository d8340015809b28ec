/**
 * The embedded object store: one file per object in `<dataDir>/objects`, written to a temporary
 * name while streaming (size cap enforced and SHA-256 computed on the way) and renamed into place,
 * so a reader never sees half a file. The hash is kept in a small sidecar file.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { once } from 'node:events';
import { ObjectTooLargeError, type ObjectStore, type StoredObject } from './object-store.js';

const KEY_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export class FsObjectStore implements ObjectStore {
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  private file(key: string): string {
    if (!KEY_PATTERN.test(key)) throw new Error('invalid object key');
    return path.join(this.dir, key);
  }

  async put(key: string, body: Readable | AsyncIterable<Uint8Array>, opts: { maxBytes: number }): Promise<StoredObject> {
    const final = this.file(key);
    const tmp = path.join(this.dir, `.tmp-${key}-${randomBytes(6).toString('hex')}`);
    const hash = createHash('sha256');
    let size = 0;
    const out = fs.createWriteStream(tmp, { flags: 'wx' });
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
        if (size > opts.maxBytes) throw new ObjectTooLargeError(opts.maxBytes);
        hash.update(buf);
        if (!out.write(buf)) await once(out, 'drain');
        if (streamError) throw streamError;
      }
      await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      const sha256 = hash.digest('hex');
      await fsp.writeFile(`${tmp}.sha256`, sha256);
      await fsp.rename(`${tmp}.sha256`, `${final}.sha256`);
      await fsp.rename(tmp, final);
      return { size, sha256, storedAt: Date.now() };
    } catch (err) {
      if (!out.closed) {
        const closed = once(out, 'close').catch(() => undefined);
        out.destroy();
        await closed;
      }
      await fsp.rm(tmp, { force: true });
      await fsp.rm(`${tmp}.sha256`, { force: true });
      throw err;
    }
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    const f = this.file(key);
    const st = await fsp.stat(f).catch(() => undefined);
    if (!st?.isFile()) return undefined;
    let sha256 = await fsp.readFile(`${f}.sha256`, 'utf8').catch(() => '');
    if (!/^[0-9a-f]{64}$/.test(sha256)) {
      const h = createHash('sha256');
      for await (const c of fs.createReadStream(f)) h.update(c as Buffer);
      sha256 = h.digest('hex');
    }
    return { size: st.size, sha256, storedAt: st.mtimeMs };
  }

  async read(key: string): Promise<Readable | undefined> {
    const f = this.file(key);
    if (!(await this.stat(key))) return undefined;
    return fs.createReadStream(f);
  }

  async readBytes(key: string): Promise<Buffer | undefined> {
    return fsp.readFile(this.file(key)).catch(() => undefined);
  }

  async localPath(key: string): Promise<{ path: string; release(): Promise<void> } | undefined> {
    const f = this.file(key);
    const st = await fsp.stat(f).catch(() => undefined);
    return st?.isFile() ? { path: f, release: async () => undefined } : undefined;
  }

  async delete(key: string): Promise<void> {
    const f = this.file(key);
    await fsp.rm(f, { force: true });
    await fsp.rm(`${f}.sha256`, { force: true });
  }

  async listOlderThan(epochMs: number): Promise<string[]> {
    const names = await fsp.readdir(this.dir).catch(() => [] as string[]);
    const out: string[] = [];
    for (const name of names) {
      if (name.endsWith('.sha256')) continue;
      const st = await fsp.stat(path.join(this.dir, name)).catch(() => undefined);
      if (!st?.isFile() || st.mtimeMs >= epochMs) continue;
      // Temporary files of an interrupted upload are swept too.
      out.push(name);
    }
    return out;
  }

  /** Removes a left-over temporary file (an upload interrupted by a crash). */
  async deleteRaw(name: string): Promise<void> {
    if (name.includes('/') || name.includes('\\')) return;
    await fsp.rm(path.join(this.dir, name), { force: true });
  }
}

/** Wraps bytes as a stream for `put`. */
export const streamOf = (bytes: Uint8Array): Readable => Readable.from([Buffer.from(bytes)]);
