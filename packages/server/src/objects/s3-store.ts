/**
 * The S3-compatible object store (`VITALS_OBJECTS_URL=s3://bucket[/prefix]?endpoint=…`), same port
 * as the data-dir folder:
 *
 * - `put` spools the upload to a local temporary file while counting and hashing it (spool.ts: the
 *   size cap rejects as soon as it is passed, nothing reaches the bucket), then sends one PutObject
 *   with the known length and the hash and time as metadata (`x-amz-meta-sha256`,
 *   `x-amz-meta-stored-at`). PutObject replaces a key atomically; the temporary file is removed
 *   whatever happens. The send is retried here (a consumed stream cannot be re-sent by the SDK).
 * - `localPath` downloads to a temporary file that `release()` removes (ffmpeg reads files).
 * - `listOlderThan` pages through ListObjectsV2 by LastModified, and only lists keys of the
 *   service's own form (`up_…`), so other objects in a shared bucket are never swept.
 *
 * The SDK is imported on first use (the default data-dir deployment never loads it). The first call
 * checks the bucket (HeadBucket) so a wrong endpoint, bucket or credential fails with a clear
 * message (s3-sdk.ts). SDK errors become ObjectStoreError: the operation, the S3 error name and
 * HTTP status, never a credential (s3-errors.ts).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type * as S3 from '@aws-sdk/client-s3';
import type { S3Settings } from '../config.js';
import type { ObjectStore, StoredObject } from './object-store.js';
import { checkKey, sha256Of, spoolToFile } from './spool.js';
import { isMissing, statusOf, wrap, type SdkError } from './s3-errors.js';
import { openSdk, type Sdk } from './s3-sdk.js';

/** Keys the service itself writes (`newObjectKey`): the only ones the sweep's listing returns. */
const SERVICE_KEY = /^up_[A-Za-z0-9_-]{1,125}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const PUT_ATTEMPTS = 3;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class S3ObjectStore implements ObjectStore {
  private sdk: Promise<Sdk> | undefined;

  /** `tmpDir`: where uploads are spooled and downloads for `localPath` land (created if missing). */
  constructor(
    readonly settings: S3Settings,
    readonly tmpDir: string,
  ) {
    fs.mkdirSync(tmpDir, { recursive: true });
  }

  /** Where an object lives in the bucket. */
  private name(key: string): string {
    checkKey(key);
    return this.settings.prefix ? `${this.settings.prefix}/${key}` : key;
  }

  private tmpFile(kind: 'put' | 'get', key: string): string {
    return path.join(this.tmpDir, `${kind}-${key}-${randomBytes(6).toString('hex')}`);
  }

  private connect(): Promise<Sdk> {
    if (this.sdk) return this.sdk;
    const s = this.settings;
    const p = openSdk(s);
    this.sdk = p;
    // A failed check is not remembered: the next call tries again (the store may come up later).
    p.catch(() => {
      if (this.sdk === p) this.sdk = undefined;
    });
    return p;
  }

  async put(
    key: string,
    body: Readable | AsyncIterable<Uint8Array>,
    opts: { maxBytes: number },
  ): Promise<StoredObject> {
    const Key = this.name(key);
    // Fails before the upload is read when the store is unreachable or misconfigured.
    const { m, putClient } = await this.connect();
    const tmp = this.tmpFile('put', key);
    const { size, sha256 } = await spoolToFile(tmp, body, opts.maxBytes);
    try {
      const storedAt = Date.now();
      for (let attempt = 1; ; attempt++) {
        // Closed after every attempt: a failed PutObject may stop reading it without closing it.
        const Body = fs.createReadStream(tmp);
        try {
          await putClient.send(
            new m.PutObjectCommand({
              Bucket: this.settings.bucket,
              Key,
              Body,
              ContentLength: size,
              ContentType: 'application/octet-stream',
              Metadata: { sha256, 'stored-at': String(storedAt) },
            }),
          );
          return { size, sha256, storedAt };
        } catch (err) {
          const status = statusOf(err);
          const retryable =
            status === undefined || status >= 500 || status === 429 || Boolean((err as SdkError).$retryable);
          if (!retryable || attempt >= PUT_ATTEMPTS) throw wrap('PutObject', err);
          await sleep(200 * 4 ** (attempt - 1));
        } finally {
          Body.destroy();
        }
      }
    } finally {
      await fsp.rm(tmp, { force: true });
    }
  }

  async stat(key: string): Promise<StoredObject | undefined> {
    const Key = this.name(key);
    const { m, client } = await this.connect();
    let head: S3.HeadObjectCommandOutput;
    try {
      head = await client.send(new m.HeadObjectCommand({ Bucket: this.settings.bucket, Key }));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw wrap('HeadObject', err);
    }
    let sha256 = head.Metadata?.sha256 ?? '';
    if (!SHA256_HEX.test(sha256)) {
      // Written by something else than this service: hash it now, as the folder adapter does.
      const stream = await this.read(key);
      if (!stream) return undefined;
      sha256 = await sha256Of(stream).catch((err: unknown) => {
        throw wrap('GetObject', err);
      });
    }
    const storedAt = Number(head.Metadata?.['stored-at']);
    return {
      size: head.ContentLength ?? 0,
      sha256,
      storedAt: Number.isFinite(storedAt) && storedAt > 0 ? storedAt : (head.LastModified?.getTime() ?? 0),
    };
  }

  private async get(key: string): Promise<S3.GetObjectCommandOutput | undefined> {
    const Key = this.name(key);
    const { m, client } = await this.connect();
    try {
      return await client.send(new m.GetObjectCommand({ Bucket: this.settings.bucket, Key }));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw wrap('GetObject', err);
    }
  }

  async read(key: string): Promise<Readable | undefined> {
    const res = await this.get(key);
    if (!res?.Body) return undefined;
    // In Node the body is the HTTP response (an IncomingMessage), already a Readable.
    const body = res.Body as unknown;
    return body instanceof Readable ? body : Readable.from(body as AsyncIterable<Uint8Array>);
  }

  async readBytes(key: string): Promise<Buffer | undefined> {
    const res = await this.get(key);
    if (!res?.Body) return undefined;
    try {
      return Buffer.from(await res.Body.transformToByteArray());
    } catch (err) {
      throw wrap('GetObject', err);
    }
  }

  async localPath(key: string): Promise<{ path: string; release(): Promise<void> } | undefined> {
    const stream = await this.read(key);
    if (!stream) return undefined;
    const file = this.tmpFile('get', key);
    try {
      await pipeline(stream, fs.createWriteStream(file, { flags: 'wx' }));
    } catch (err) {
      await fsp.rm(file, { force: true });
      throw wrap('GetObject', err);
    }
    return { path: file, release: () => fsp.rm(file, { force: true }) };
  }

  async delete(key: string): Promise<void> {
    const Key = this.name(key);
    const { m, client } = await this.connect();
    try {
      // Deleting a key that does not exist succeeds in S3, as in the folder adapter.
      await client.send(new m.DeleteObjectCommand({ Bucket: this.settings.bucket, Key }));
    } catch (err) {
      if (isMissing(err)) return;
      throw wrap('DeleteObject', err);
    }
  }

  /**
   * Service keys whose LastModified (the store's clock) is before `epochMs`. Also removes this
   * store's own temporary files older than that (spools and downloads left by a crash).
   */
  async listOlderThan(epochMs: number): Promise<string[]> {
    await this.sweepTmp(epochMs);
    const { m, client } = await this.connect();
    const pre = this.settings.prefix ? `${this.settings.prefix}/` : '';
    const out: string[] = [];
    let token: string | undefined;
    do {
      let page: S3.ListObjectsV2CommandOutput;
      try {
        page = await client.send(
          new m.ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: pre, ContinuationToken: token }),
        );
      } catch (err) {
        throw wrap('ListObjectsV2', err);
      }
      for (const o of page.Contents ?? []) {
        if (!o.Key?.startsWith(pre)) continue;
        const key = o.Key.slice(pre.length);
        if (!SERVICE_KEY.test(key)) continue;
        if (o.LastModified && o.LastModified.getTime() < epochMs) out.push(key);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  private async sweepTmp(epochMs: number): Promise<void> {
    const names = await fsp.readdir(this.tmpDir).catch(() => [] as string[]);
    for (const n of names) {
      if (!/^(put|get)-/.test(n)) continue;
      const f = path.join(this.tmpDir, n);
      const st = await fsp.stat(f).catch(() => undefined);
      if (st?.isFile() && st.mtimeMs < epochMs) await fsp.rm(f, { force: true });
    }
  }

  /** Closes the HTTP connections (tests, shutdown). */
  async close(): Promise<void> {
    const p = this.sdk;
    this.sdk = undefined;
    const sdk = await p?.catch(() => undefined);
    sdk?.client.destroy();
    sdk?.putClient.destroy();
  }
}
