/**
 * The model bundle the browser capture needs (issue 15, §1): the face models of the video
 * pipeline's Human configuration (packages/media/src/human-runtime.ts, `BASE_CONFIG`: BlazeFace,
 * FaceMesh, Iris, Emotion) read from the `@vladmandic/human` npm package's `models/`, and the tfjs
 * WASM runtime binaries from `@tensorflow/tfjs-backend-wasm`'s `dist/`. Nothing comes from a CDN or
 * a hub. Files are held in memory (about 7 MB) and addressed by their SHA-256.
 *
 * `modelsVersion` (spec: Measurement, 1-64 chars of `^[A-Za-z0-9][A-Za-z0-9._+-]*$`) is derived
 * from the content: `human-<package version>+<first 12 hex of the bundle hash>`, where the bundle
 * hash is the SHA-256 of the sorted `name sha256` lines, so any changed file changes the version.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface BundleFile {
  /** The file's original name (`blazeface.json`, `tfjs-backend-wasm-simd.wasm`, ...). */
  readonly name: string;
  /** Lowercase hex SHA-256 of the bytes: the file's address. */
  readonly sha256: string;
  readonly bytes: number;
  readonly contentType: string;
  readonly data: Buffer;
}

export interface ModelBundle {
  readonly modelsVersion: string;
  /** Sorted by name. */
  readonly files: readonly BundleFile[];
  readonly byHash: ReadonlyMap<string, BundleFile>;
}

export interface BundleSources {
  /** The `@vladmandic/human` package directory (holds `models/` and `package.json`). */
  readonly humanDir: string;
  /** The directory of the tfjs WASM binaries. */
  readonly wasmDir: string;
}

/** The models of the video pipeline's Human configuration (human-runtime.ts `BASE_CONFIG`). */
export const BUNDLE_MODELS = ['blazeface', 'facemesh', 'iris', 'emotion'] as const;
/** tfjs-backend-wasm picks one of these by the browser's SIMD and threads support. */
export const BUNDLE_WASM = [
  'tfjs-backend-wasm.wasm',
  'tfjs-backend-wasm-simd.wasm',
  'tfjs-backend-wasm-threaded-simd.wasm',
] as const;

const CONTENT_TYPES: Record<string, string> = {
  '.json': 'application/json',
  '.bin': 'application/octet-stream',
  // application/wasm lets the browser compile while it downloads (WebAssembly.instantiateStreaming).
  '.wasm': 'application/wasm',
};

const require = createRequire(import.meta.url);

/** The packages' directories as installed (npm workspaces hoist them to the root node_modules). */
export function defaultBundleSources(): BundleSources {
  // Human's `exports` hides package.json; its main entry sits in dist/.
  const humanDir = path.dirname(path.dirname(require.resolve('@vladmandic/human')));
  const wasmDir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm'));
  return { humanDir, wasmDir };
}

async function fileOf(dir: string, name: string): Promise<BundleFile> {
  const data = await readFile(path.join(dir, name));
  return Object.freeze({
    name,
    sha256: createHash('sha256').update(data).digest('hex'),
    bytes: data.length,
    contentType: CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream',
    data,
  });
}

/** Reads and hashes the bundle. Each model's weight shards are the ones its JSON names. */
export async function readModelBundle(src: BundleSources): Promise<ModelBundle> {
  const modelDir = path.join(src.humanDir, 'models');
  const names = new Set<string>();
  for (const model of BUNDLE_MODELS) {
    const json = `${model}.json`;
    names.add(json);
    const doc = JSON.parse(await readFile(path.join(modelDir, json), 'utf8')) as {
      weightsManifest?: Array<{ paths: string[] }>;
    };
    for (const group of doc.weightsManifest ?? [])
      for (const p of group.paths) {
        // A shard path is a plain file name beside its JSON; anything else is not ours to serve.
        if (path.basename(p) !== p) throw new Error(`model ${json} names a weight file outside its folder: ${p}`);
        names.add(p);
      }
  }
  const files = [
    ...(await Promise.all([...names].map((n) => fileOf(modelDir, n)))),
    ...(await Promise.all(BUNDLE_WASM.map((n) => fileOf(src.wasmDir, n)))),
  ].sort((a, b) => (a.name < b.name ? -1 : 1));
  const version = (JSON.parse(await readFile(path.join(src.humanDir, 'package.json'), 'utf8')) as { version: string })
    .version;
  const bundleHash = createHash('sha256')
    .update(files.map((f) => `${f.name} ${f.sha256}\n`).join(''))
    .digest('hex');
  const modelsVersion = `human-${version}+${bundleHash.slice(0, 12)}`;
  return Object.freeze({
    modelsVersion,
    files: Object.freeze(files),
    byHash: new Map(files.map((f) => [f.sha256, f])),
  });
}

const cache = new Map<string, Promise<ModelBundle>>();

/** One read per process and source (every app of a test run shares it); a failed read is retried. */
export function modelBundle(src: BundleSources): Promise<ModelBundle> {
  const k = `${src.humanDir}\0${src.wasmDir}`;
  let p = cache.get(k);
  if (!p) {
    p = readModelBundle(src);
    p.catch(() => cache.delete(k));
    cache.set(k, p);
  }
  return p;
}
