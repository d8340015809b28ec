/**
 * One shared @vladmandic/human instance on the tfjs WASM backend, with every model read from the
 * package's own `models/` folder and the WASM binaries from @tensorflow/tfjs-backend-wasm's
 * `dist/` folder: nothing is fetched from a network, ever (RPPG-NOTES 4C).
 *
 * Human keeps its detector cache (the boxes FaceMesh tracks from) and its models in module state.
 * `loadHuman()` is the process's shared instance for stateless calls (the aux analyzer's full
 * detections); a tracker leases an instance of its own with `leaseHuman()` (a fresh evaluation of
 * Human's module, pooled and reused after release), so its tracking never depends on another job
 * (issue 15 §2, issue 17). Every inference in the process goes through one queue (`runExclusive`):
 * tfjs-wasm is single-threaded, and interleaved async detections would only contend.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HUMAN_BASE_CONFIG, type HumanFace, type HumanSession, type RgbImage } from '@vitals/tracker';

export type { HumanFace } from '@vitals/tracker';

const require = createRequire(import.meta.url);

interface HumanTensor {
  dispose(): void;
}
interface HumanTf {
  tensor(values: Int32Array | Float32Array, shape: number[], dtype: string): HumanTensor;
  io: { registerLoadRouter(router: (url: string | string[]) => unknown): void };
  getBackend(): string;
}
interface HumanInstance {
  version: string;
  tf: HumanTf;
  load(): Promise<void>;
  detect(input: HumanTensor, config: object): Promise<{ face: HumanFace[]; error?: string | null }>;
  models: { loaded(): string[] };
}

export interface HumanRuntime {
  readonly human: HumanInstance;
  readonly version: string;
  readonly modelDir: string;
  readonly loaded: string[];
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Builds an input tensor from an RGB image; the caller disposes it. */
  tensorFrom(image: RgbImage): HumanTensor;
}

export function humanPackageDir(): string {
  // The package's `exports` hides package.json and dist/*; its main entry sits in dist/.
  return path.dirname(path.dirname(require.resolve('@vladmandic/human')));
}

/** Model files read straight from disk (a tfjs IO router for `file://` URLs). */
function fileRouter(url: string | string[]): unknown {
  if (typeof url !== 'string' || !url.startsWith('file://')) return null;
  return {
    load: async () => {
      const file = fileURLToPath(url);
      const json = JSON.parse(readFileSync(file, 'utf8')) as {
        modelTopology: unknown;
        format?: string;
        generatedBy?: string;
        convertedBy?: string;
        signature?: unknown;
        userDefinedMetadata?: unknown;
        weightsManifest: { paths: string[]; weights: unknown[] }[];
      };
      const specs: unknown[] = [];
      const parts: Buffer[] = [];
      for (const group of json.weightsManifest) {
        specs.push(...group.weights);
        for (const p of group.paths) parts.push(readFileSync(path.join(path.dirname(file), p)));
      }
      const all = Buffer.concat(parts);
      return {
        modelTopology: json.modelTopology,
        format: json.format,
        generatedBy: json.generatedBy,
        convertedBy: json.convertedBy,
        signature: json.signature,
        userDefinedMetadata: json.userDefinedMetadata,
        weightSpecs: specs,
        weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
      };
    },
  };
}

/** Everything off except the face models we use; per-call configs switch iris and emotion. */
export const BASE_CONFIG = HUMAN_BASE_CONFIG;

let runtime: Promise<HumanRuntime> | undefined;
let queue: Promise<unknown> = Promise.resolve();
const idle: HumanRuntime[] = [];
let routerRegistered = false;

function runExclusive<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => undefined);
  return next;
}

/**
 * A Human instance for one tracker alone (models loaded, ~0.3 s for a new one; reused from a pool
 * when another tracker released one). Its first call must be a fresh detection (the tracker's is).
 */
export async function leaseHuman(): Promise<HumanSession> {
  const rt = idle.pop() ?? (await create(true));
  let leased = true;
  return {
    version: rt.version,
    backend: 'wasm',
    detectRgb: (image, config) =>
      rt.runExclusive(async () => {
        const input = rt.tensorFrom(image);
        try {
          return await rt.human.detect(input, config);
        } finally {
          input.dispose();
        }
      }),
    release() {
      if (!leased) return;
      leased = false;
      if (idle.length < 4) idle.push(rt);
    },
  };
}

/** Loads Human once per process (about 0.3 s and ~60 MB); later calls share it. */
export function loadHuman(): Promise<HumanRuntime> {
  runtime ??= create().catch((err: unknown) => {
    runtime = undefined;
    throw err;
  });
  return runtime;
}

async function create(separate = false): Promise<HumanRuntime> {
  const dir = humanPackageDir();
  const modelDir = path.join(dir, 'models');
  const wasmDir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) + path.sep;
  const main = path.join(dir, 'dist', 'human.node-wasm.js');
  // A separate instance is a fresh evaluation of Human's module (its own detector cache and model
  // handles); tfjs stays shared through require's cache.
  if (separate) delete require.cache[require.resolve(main)];
  const { Human } = require(main) as {
    Human: new (config: object) => HumanInstance;
  };
  // A tracker's own instance needs BlazeFace and FaceMesh only (iris and emotion stay with the shared one).
  const face = separate
    ? { ...BASE_CONFIG.face, iris: { enabled: false }, emotion: { enabled: false } }
    : BASE_CONFIG.face;
  const human = new Human({
    ...BASE_CONFIG,
    face,
    wasmPath: wasmDir,
    modelBasePath: pathToFileURL(modelDir).href + '/',
  });
  // tfjs is shared by every instance: its IO router is registered once (two would both match).
  if (!routerRegistered) human.tf.io.registerLoadRouter(fileRouter);
  routerRegistered = true;
  await human.load();
  const loaded = human.models.loaded();
  if (!loaded.includes('blazeface') || !loaded.includes('facemesh')) {
    throw new Error(`face models did not load from ${modelDir} (loaded: ${loaded.join(', ') || 'none'})`);
  }
  // One float buffer per instance, reused: tfjs-wasm copies the values into its heap at once.
  let floats = new Float32Array(0);
  return {
    human,
    version: human.version,
    modelDir,
    loaded,
    runExclusive,
    tensorFrom(image: RgbImage) {
      const { width, height } = image;
      const n = width * height * 3;
      if (floats.length !== n) floats = new Float32Array(n);
      // float32 (0-255) spares Human's own int-to-float cast of the whole frame.
      if (image.data.length === n) floats.set(image.data);
      else return human.tf.tensor(new Float32Array(image.data), [1, height, width, 3], 'float32');
      return human.tf.tensor(floats, [1, height, width, 3], 'float32');
    },
  };
}
