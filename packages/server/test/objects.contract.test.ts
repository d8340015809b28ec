/**
 * The ObjectStore port's contract (objects/object-store.ts), run against both adapters: the data-dir
 * folder and the S3-compatible store over a real S3 protocol server (s3rver), at the bucket's root
 * and under a key prefix. Then what only the S3 adapter does: its configuration, objects written by
 * someone else, a shared bucket, and clean failures when the store is wrong or away.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { S3Client, PutObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { ConfigError, loadConfig, parseObjectsUrl } from '../src/config.js';
import {
  createObjectStore,
  FsObjectStore,
  ObjectStoreError,
  ObjectTooLargeError,
  S3ObjectStore,
  type ObjectStore,
} from '../src/objects/index.js';
import { S3RVER_CREDENTIALS, startS3, type TestS3 } from './s3-server.js';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const bytes = (n: number, seed = 1): Buffer => {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 17) & 0xff;
  return b;
};
const chunks = (b: Buffer, size: number): Buffer[] => {
  const out: Buffer[] = [];
  for (let i = 0; i < b.length; i += size) out.push(b.subarray(i, i + size));
  return out;
};
let n = 0;
const newKey = (): string => `up_${process.pid}x${Date.now().toString(16)}x${++n}`;
const collect = async (r: Readable): Promise<Buffer> => {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
};

let s3: TestS3;
const tmpDirs: string[] = [];
const mkTmp = (name: string): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `vitals-objects-${name}-`));
  tmpDirs.push(d);
  return d;
};
const opened: S3ObjectStore[] = [];

beforeAll(async () => {
  s3 = await startS3();
});
afterAll(async () => {
  for (const s of opened) await s.close();
  await s3?.close();
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

function openS3(prefix?: string, env: Record<string, string> = {}): S3ObjectStore {
  const store = new S3ObjectStore(
    parseObjectsUrl(s3.objectsUrl(prefix), { ...S3RVER_CREDENTIALS, ...env }),
    mkTmp('s3tmp'),
  );
  opened.push(store);
  return store;
}

/** Files an adapter leaves on local disk besides its objects (temporary spools must not stay). */
interface Adapter {
  name: string;
  open(): { store: ObjectStore; leftovers(): string[] };
}

const adapters: Adapter[] = [
  {
    name: 'data-dir folder',
    open() {
      const store = new FsObjectStore(mkTmp('fs'));
      return { store, leftovers: () => fs.readdirSync(store.dir).filter((f) => f.startsWith('.tmp-')) };
    },
  },
  {
    name: 'S3 (bucket root)',
    open() {
      const store = openS3();
      return { store, leftovers: () => fs.readdirSync(store.tmpDir) };
    },
  },
  {
    name: 'S3 (key prefix)',
    open() {
      const store = openS3('tenant-a/objects');
      return { store, leftovers: () => fs.readdirSync(store.tmpDir) };
    },
  },
];

describe.each(adapters)('ObjectStore contract: $name', (adapter) => {
  let store: ObjectStore;
  let leftovers: () => string[];
  beforeAll(() => {
    ({ store, leftovers } = adapter.open());
  });

  test('put streams the bytes in: size, SHA-256 and time; stat, read, readBytes and localPath give them back', async () => {
    const key = newKey();
    const body = bytes(3 * 1024 * 1024 + 17);
    const before = Date.now();
    const stored = await store.put(key, Readable.from(chunks(body, 64 * 1024)), { maxBytes: 4 * 1024 * 1024 });
    const after = Date.now();
    expect(stored).toEqual({ size: body.length, sha256: sha(body), storedAt: expect.any(Number) });
    expect(stored.storedAt).toBeGreaterThanOrEqual(before - 1000);
    expect(stored.storedAt).toBeLessThanOrEqual(after + 1000);

    const st = await store.stat(key);
    expect(st).toMatchObject({ size: body.length, sha256: sha(body) });
    expect(Math.abs(st!.storedAt - stored.storedAt)).toBeLessThan(2000);
    expect((await store.readBytes(key))!.equals(body)).toBe(true);
    expect((await collect((await store.read(key))!)).equals(body)).toBe(true);

    const local = (await store.localPath(key))!;
    expect(fs.readFileSync(local.path).equals(body)).toBe(true);
    await local.release();
    // Released: the adapter's own copy is gone (S3); the folder's file is the object itself.
    if (store instanceof S3ObjectStore) expect(fs.existsSync(local.path)).toBe(false);
    expect(await store.stat(key)).toBeDefined();
    expect(leftovers()).toEqual([]);
  });

  test('an async iterable of Uint8Array and an empty body are accepted', async () => {
    const key = newKey();
    async function* gen(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array([1, 2, 3]);
      yield new Uint8Array([4]);
    }
    expect(await store.put(key, gen(), { maxBytes: 4 })).toMatchObject({
      size: 4,
      sha256: sha(new Uint8Array([1, 2, 3, 4])),
    });
    const empty = newKey();
    expect(await store.put(empty, Readable.from([]), { maxBytes: 10 })).toMatchObject({
      size: 0,
      sha256: sha(new Uint8Array()),
    });
    expect(await store.stat(empty)).toMatchObject({ size: 0, sha256: sha(new Uint8Array()) });
    expect((await store.readBytes(empty))!.length).toBe(0);
  });

  test('a second put replaces the object whole', async () => {
    const key = newKey();
    await store.put(key, Readable.from([bytes(1000, 1)]), { maxBytes: 10_000 });
    const second = bytes(300, 2);
    expect(await store.put(key, Readable.from([second]), { maxBytes: 10_000 })).toMatchObject({
      size: 300,
      sha256: sha(second),
    });
    expect(await store.stat(key)).toMatchObject({ size: 300, sha256: sha(second) });
    expect((await store.readBytes(key))!.equals(second)).toBe(true);
  });

  test('over maxBytes: ObjectTooLargeError as soon as the cap is passed, nothing kept, the previous version intact', async () => {
    const key = newKey();
    const first = bytes(100, 3);
    await store.put(key, Readable.from([first]), { maxBytes: 1000 });
    let pulled = 0;
    async function* endless(): AsyncGenerator<Uint8Array> {
      for (;;) {
        pulled++;
        yield bytes(400, pulled);
      }
    }
    await expect(store.put(key, endless(), { maxBytes: 1000 })).rejects.toBeInstanceOf(ObjectTooLargeError);
    expect(pulled).toBe(3); // 1200 bytes > 1000: stopped at the third chunk
    const fresh = newKey();
    await expect(store.put(fresh, Readable.from([bytes(1001)]), { maxBytes: 1000 })).rejects.toBeInstanceOf(
      ObjectTooLargeError,
    );
    expect(await store.stat(fresh)).toBeUndefined();
    expect(await store.stat(key)).toMatchObject({ size: 100, sha256: sha(first) });
    expect(leftovers()).toEqual([]);
  });

  test('a body that fails mid-way rejects with its error and keeps nothing', async () => {
    const key = newKey();
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield bytes(500);
      throw new Error('client went away');
    }
    await expect(store.put(key, broken(), { maxBytes: 10_000 })).rejects.toThrow('client went away');
    expect(await store.stat(key)).toBeUndefined();
    expect(leftovers()).toEqual([]);
  });

  test('a missing object: stat, read, readBytes and localPath answer undefined; delete is a no-op', async () => {
    const key = newKey();
    expect(await store.stat(key)).toBeUndefined();
    expect(await store.read(key)).toBeUndefined();
    expect(await store.readBytes(key)).toBeUndefined();
    expect(await store.localPath(key)).toBeUndefined();
    await expect(store.delete(key)).resolves.toBeUndefined();
  });

  test('delete removes the object; deleting twice is fine', async () => {
    const key = newKey();
    await store.put(key, Readable.from([bytes(10)]), { maxBytes: 100 });
    await store.delete(key);
    expect(await store.stat(key)).toBeUndefined();
    expect(await store.readBytes(key)).toBeUndefined();
    await store.delete(key);
  });

  test('keys that are not object keys are refused before anything is touched', async () => {
    for (const bad of ['../escape', 'a/b', '', 'x'.repeat(129), 'sp ace']) {
      await expect(store.put(bad, Readable.from([bytes(1)]), { maxBytes: 10 })).rejects.toThrow(/invalid object key/);
      await expect(store.stat(bad)).rejects.toThrow(/invalid object key/);
    }
  });

  test('listOlderThan: keys stored before the time, not after', async () => {
    const a = newKey();
    const b = newKey();
    const t0 = Date.now();
    await store.put(a, Readable.from([bytes(5)]), { maxBytes: 10 });
    await store.put(b, Readable.from([bytes(6)]), { maxBytes: 10 });
    // S3 reports LastModified in whole seconds; give the comparisons a margin either side.
    const later = await store.listOlderThan(Date.now() + 5000);
    expect(later).toEqual(expect.arrayContaining([a, b]));
    const earlier = await store.listOlderThan(t0 - 5000);
    expect(earlier).not.toContain(a);
    expect(earlier).not.toContain(b);
    await store.delete(a);
    expect(await store.listOlderThan(Date.now() + 5000)).not.toContain(a);
  });

  test('concurrent puts of different keys do not mix', async () => {
    const keys = Array.from({ length: 6 }, () => newKey());
    const bodies = keys.map((_, i) => bytes(50_000 + i * 1000, i + 10));
    await Promise.all(keys.map((k, i) => store.put(k, Readable.from(chunks(bodies[i]!, 7000)), { maxBytes: 100_000 })));
    for (const [i, k] of keys.entries())
      expect(await store.stat(k)).toMatchObject({ size: bodies[i]!.length, sha256: sha(bodies[i]!) });
  });
});

describe('VITALS_OBJECTS_URL', () => {
  const creds = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-secret' };

  test('unset: the data-dir folder; set: the S3 adapter with bucket, prefix, endpoint, region and path style', () => {
    const dataDir = mkTmp('cfg');
    expect(createObjectStore(loadConfig({ VITALS_DATA_DIR: dataDir }))).toBeInstanceOf(FsObjectStore);
    const cfg = loadConfig({
      VITALS_DATA_DIR: dataDir,
      VITALS_OBJECTS_URL: 's3://my-bucket/a/b/?endpoint=http://127.0.0.1:9000/&region=eu-west-3',
      ...creds,
    });
    expect(cfg.s3).toMatchObject({
      bucket: 'my-bucket',
      prefix: 'a/b',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-3',
      forcePathStyle: true,
    });
    const store = createObjectStore(cfg);
    expect(store).toBeInstanceOf(S3ObjectStore);
    expect((store as S3ObjectStore).tmpDir).toBe(path.join(dataDir, 'objects-tmp'));
  });

  test('defaults: AWS itself without endpoint (virtual-host style), region from AWS_REGION, else us-east-1; forcePathStyle can be set', () => {
    expect(parseObjectsUrl('s3://bkt', creds)).toMatchObject({
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
      prefix: '',
    });
    expect(parseObjectsUrl('s3://bkt', { ...creds, AWS_REGION: 'ap-south-1' }).region).toBe('ap-south-1');
    expect(parseObjectsUrl('s3://bkt?endpoint=https://s3.example.net&forcePathStyle=false', creds).forcePathStyle).toBe(
      false,
    );
    expect(parseObjectsUrl('s3://bkt?forcePathStyle=1', creds).forcePathStyle).toBe(true);
  });

  test.each([
    ['http://bucket', /must start with s3:\/\//],
    ['s3://Bad_Bucket', /not a valid bucket name/],
    ['s3://ab', /not a valid bucket name/],
    ['s3://bkt?endpoint=ftp://host', /endpoint must be an http/],
    ['s3://bkt?endpoint=not a url', /endpoint must be an http/],
    ['s3://bkt?endpoint=http://user:pw@host', /without credentials/],
    ['s3://bkt?forcePathStyle=yes', /forcePathStyle must be true or false/],
    ['s3://bkt?regoin=x', /unknown parameter "regoin"/],
    ['s3://bkt/has space', /key prefix/],
    ['s3://bkt/bad%E0%A4%A', /not valid percent-encoding/],
    ['s3://bkt/a//b', /empty, "." or ".." segments/],
    ['s3://bkt/a/%2E%2E%2Fb', /empty, "." or ".." segments/],
    ['s3://bkt/a%2F.%2Fb', /empty, "." or ".." segments/],
  ])('%s is refused at start', (url, message) => {
    expect(() => loadConfig({ VITALS_OBJECTS_URL: url, ...creds })).toThrow(message);
    expect(() => loadConfig({ VITALS_OBJECTS_URL: url, ...creds })).toThrow(ConfigError);
  });

  test('credentials come from the environment only, are required, and never show in the config or its errors', () => {
    expect(() => loadConfig({ VITALS_OBJECTS_URL: 's3://bkt' })).toThrow(
      /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set/,
    );
    let err: unknown;
    try {
      loadConfig({ VITALS_OBJECTS_URL: 's3://AKIDEXAMPLE:wJalrXUtnFEMI-secret@bkt', ...creds });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect(String(err)).toMatch(/must not carry credentials/);
    expect(String(err)).not.toContain('wJalrXUtnFEMI-secret');
    const cfg = loadConfig({
      VITALS_OBJECTS_URL: 's3://bkt?endpoint=http://127.0.0.1:1',
      ...creds,
      AWS_SESSION_TOKEN: 'tok-secret',
    });
    for (const shown of [JSON.stringify(cfg), inspect(cfg, { depth: 10 })]) {
      expect(shown).not.toContain('wJalrXUtnFEMI-secret');
      expect(shown).not.toContain('tok-secret');
    }
    expect(cfg.s3!.credentials()).toEqual({
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI-secret',
      sessionToken: 'tok-secret',
    });
  });
});

describe('S3 adapter specifics', () => {
  const raw = (): S3Client =>
    new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });

  test('the hash and time travel as object metadata', async () => {
    const store = openS3('meta');
    const key = newKey();
    const body = bytes(777);
    const stored = await store.put(key, Readable.from([body]), { maxBytes: 1000 });
    const client = raw();
    const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `meta/${key}` }));
    client.destroy();
    expect(head.ContentLength).toBe(777);
    expect(head.Metadata).toEqual({ sha256: sha(body), 'stored-at': String(stored.storedAt) });
    expect((await store.stat(key))!.storedAt).toBe(stored.storedAt);
  });

  test('an object written by someone else (no metadata) is hashed on stat, timed by LastModified', async () => {
    const store = openS3('foreign');
    const key = newKey();
    const body = bytes(4096, 9);
    const client = raw();
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `foreign/${key}`, Body: body }));
    client.destroy();
    const st = (await store.stat(key))!;
    expect(st).toMatchObject({ size: 4096, sha256: sha(body) });
    expect(Math.abs(st.storedAt - Date.now())).toBeLessThan(10_000);
  });

  test("listOlderThan lists only the service's keys under its own prefix (a shared bucket's other objects are never swept)", async () => {
    const store = openS3('shared');
    const mine = newKey();
    await store.put(mine, Readable.from([bytes(3)]), { maxBytes: 10 });
    const client = raw();
    for (const Key of [
      'shared/report-2026',
      'shared/up_nested/deeper',
      'shared-other/up_x1',
      `elsewhere/${newKey()}`,
    ]) {
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body: 'x' }));
    }
    client.destroy();
    expect(await store.listOlderThan(Date.now() + 5000)).toEqual([mine]);
  });

  test('listOlderThan pages through more than one ListObjectsV2 answer', async () => {
    const store = openS3('many');
    const keys = Array.from({ length: 1010 }, (_, i) => `up_many${String(i).padStart(5, '0')}`);
    const client = raw();
    for (let i = 0; i < keys.length; i += 50) {
      await Promise.all(
        keys
          .slice(i, i + 50)
          .map((k) => client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `many/${k}`, Body: 'x' }))),
      );
    }
    client.destroy();
    expect((await store.listOlderThan(Date.now() + 5000)).sort()).toEqual(keys);
  }, 60_000);

  test('stale temporary files (a crash mid-upload) are removed by the sweep listing', async () => {
    const store = openS3('tmp');
    const stale = path.join(store.tmpDir, 'put-up_stale-abc');
    fs.writeFileSync(stale, 'partial');
    const old = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(stale, old, old);
    const fresh = path.join(store.tmpDir, 'get-up_fresh-abc');
    fs.writeFileSync(fresh, 'in use');
    await store.listOlderThan(Date.now() - 3600_000);
    expect(fs.existsSync(stale)).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
    fs.rmSync(fresh);
  });

  test('refused credentials: ObjectStoreError naming the operation and the S3 error, never the secret; the upload is not read', async () => {
    // s3rver checks the access key id, not SigV4 signatures: an unknown key id is its refusal.
    const store = openS3(undefined, { AWS_ACCESS_KEY_ID: 'UNKNOWNKEY', AWS_SECRET_ACCESS_KEY: 'not-the-right-secret' });
    let pulled = 0;
    async function* body(): AsyncGenerator<Uint8Array> {
      pulled++;
      yield bytes(10);
    }
    const err = await store.put(newKey(), body(), { maxBytes: 100 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStoreError);
    expect(String(err)).toMatch(
      /object store: bucket check of "vitals-test" at http:\/\/127\.0\.0\.1:\d+ failed \(.*HTTP 403/,
    );
    expect(String(err)).not.toContain('not-the-right-secret');
    expect(inspect(err, { depth: 10 })).not.toContain('not-the-right-secret');
    expect(inspect(err, { depth: 10 })).not.toMatch(/authorization|AWS4-HMAC/i);
    expect(err).toMatchObject({ status: 403 });
    expect(pulled).toBe(0);
    await expect(store.stat(newKey())).rejects.toBeInstanceOf(ObjectStoreError);
    expect(fs.readdirSync(store.tmpDir)).toEqual([]);
  });

  test('a missing bucket and an unreachable endpoint are clean failures too', async () => {
    const missing = new S3ObjectStore(
      parseObjectsUrl(`s3://no-such-bucket?endpoint=${s3.endpoint}`, S3RVER_CREDENTIALS),
      mkTmp('s3tmp'),
    );
    opened.push(missing);
    await expect(missing.readBytes(newKey())).rejects.toThrow(/bucket check of "no-such-bucket".*404/);
    // A port nothing listens on (taken and released).
    const net = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const away = new S3ObjectStore(
      parseObjectsUrl(`s3://bkt?endpoint=http://127.0.0.1:${port}`, S3RVER_CREDENTIALS),
      mkTmp('s3tmp'),
    );
    opened.push(away);
    const err = await away.delete(newKey()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStoreError);
    expect(String(err)).toMatch(/object store: bucket check of "bkt" at http:\/\/127\.0\.0\.1:\d+ failed/);
  }, 30_000);
});
