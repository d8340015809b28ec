/**
 * The embedded object store: one file per object in `<dataDir>/objects`, written to a temporary
 * name while streaming (size cap enforced and SHA-256 computed on the way) and renamed into place,
 * so a reader never sees half a file. The hash is kept in a small sidecar file.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ObjectStore, StoredObject } from './object-store.js';
import { checkKey, sha256Of, spoolToFile } from './spool.js';

export class FsObjectStore implements ObjectStore {
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  private file(key: string): string {
    return path.join(this.dir, checkKey(key));
  }

  async put(
    key: string,
    body: Readable | AsyncIterable<Uint8Array>,
    opts: { maxBytes: number },
  ): Promise<StoredObject> {
    const final = this.file(key);
    const tmp = path.join(this.dir, `.tmp-${key}-${randomBytes(6).toString('hex')}`);
    const { size, sha256 } = await spoolToFile(tmp, body, opts.maxBytes);
    try {
      await fsp.writeFile(`${tmp}.sha256`, sha256);
      await fsp.rename(`${tmp}.sha256`, `${final}.sha256`);
      await fsp.rename(tmp, final);
      return { size, sha256, storedAt: Date.now() };
    } catch (err) {
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
    if (!/^[0-9a-f]{64}$/.test(sha256)) sha256 = await sha256Of(fs.createReadStream(f));
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
