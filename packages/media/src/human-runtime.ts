/**
 * One shared @vladmandic/human instance on the tfjs WASM backend, with every model read from the
 * package's own `models/` folder and the WASM binaries from @tensorflow/tfjs-backend-wasm's
 * `dist/` folder: nothing is fetched from a network, ever (RPPG-NOTES 4C).
 *
 * Human keeps its detector cache in module state, so there is exactly one instance per process
 * and every call goes through `runExclusive` (one inference at a time; WASM is single-threaded
 * here anyway).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);

/** The slice of Human's API we use (its own typings pull in DOM types). */
export interface HumanFace {
  score: number;
  boxScore: number;
  faceScore: number;
  box: [number, number, number, number];
  mesh: [number, number, number?][];
  rotation?: { angle: { roll: number; yaw: number; pitch: number } } | null;
  emotion?: { score: number; emotion: string }[];
  annotations: Record<string, [number, number, number?][]>;
}
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
  /** Builds an input tensor from interleaved RGB; the caller disposes it. */
  tensorFromRgb(data: Uint8Array, width: number, height: number): HumanTensor;
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
export const BASE_CONFIG = {
  backend: 'wasm',
  debug: false,
  async: true,
  warmup: 'none',
  cacheModels: false,
  cacheSensitivity: 0,
  filter: { enabled: false },
  face: {
    enabled: true,
    detector: {
      enabled: true,
      rotation: false,
      maxDetected: 5,
      minConfidence: 0.5,
      iouThreshold: 0.1,
      skipFrames: 0,
      skipTime: 0,
      return: false,
    },
    mesh: { enabled: true, keepInvalid: false },
    iris: { enabled: true },
    emotion: { enabled: true, minConfidence: 0, skipFrames: 0, skipTime: 0 },
    description: { enabled: false },
    antispoof: { enabled: false },
    liveness: { enabled: false },
    attention: { enabled: false },
    gear: { enabled: false },
  },
  body: { enabled: false },
  hand: { enabled: false },
  object: { enabled: false },
  gesture: { enabled: false },
  segmentation: { enabled: false },
};

let runtime: Promise<HumanRuntime> | undefined;

/** Loads Human once per process (about 0.3 s and ~60 MB); later calls share it. */
export function loadHuman(): Promise<HumanRuntime> {
  runtime ??= create().catch((err: unknown) => {
    runtime = undefined;
    throw err;
  });
  return runtime;
}

async function create(): Promise<HumanRuntime> {
  const dir = humanPackageDir();
  const modelDir = path.join(dir, 'models');
  const wasmDir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) + path.sep;
  const { Human } = require(path.join(dir, 'dist', 'human.node-wasm.js')) as {
    Human: new (config: object) => HumanInstance;
  };
  const human = new Human({
    ...BASE_CONFIG,
    wasmPath: wasmDir,
    modelBasePath: pathToFileURL(modelDir).href + '/',
  });
  human.tf.io.registerLoadRouter(fileRouter);
  await human.load();
  const loaded = human.models.loaded();
  if (!loaded.includes('blazeface') || !loaded.includes('facemesh')) {
    throw new Error(`face models did not load from ${modelDir} (loaded: ${loaded.join(', ') || 'none'})`);
  }
  let queue: Promise<unknown> = Promise.resolve();
  return {
    human,
    version: human.version,
    modelDir,
    loaded,
    runExclusive<T>(fn: () => Promise<T>): Promise<T> {
      const next = queue.then(fn, fn);
      queue = next.catch(() => undefined);
      return next;
    },
    tensorFromRgb(data, width, height) {
      // float32 (0-255) spares Human's own int-to-float cast of the whole frame.
      return human.tf.tensor(new Float32Array(data), [1, height, width, 3], 'float32');
    },
  };
}
