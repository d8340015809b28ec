/**
 * One shared @vladmandic/human instance on the tfjs WASM backend, with every model read from the
 * package's own `models/` folder and the WASM binaries from @tensorflow/tfjs-backend-wasm's
 * `dist/` folder: nothing is fetched from a network, ever (RPPG-NOTES 4C).
 *
 * Human keeps its detector cache (the boxes FaceMesh tracks from) and its models in module state.
 * `loadHuman()` is the process's shared instance for the aux analyzer (a fresh evaluation of Human's
 * module too, so that its FaceMesh can be handed a box to start from: `detectFromBox`; no call
 * leaves anything for the next); a tracker leases an instance of its own with `leaseHuman()` (a
 * fresh evaluation of Human's module, pooled and reused after release), so its tracking never
 * depends on another job (issue 15 §2, issue 17). Every inference in the process goes through one queue (`runExclusive`):
 * tfjs-wasm is single-threaded, and interleaved async detections would only contend.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { HUMAN_BASE_CONFIG, TRACKER_MODELS, type HumanFace, type HumanSession, type RgbImage } from '@vitals/tracker';
import { replayKernels, type ReplayModel, type ReplayTf } from './graph-replay.js';
import { FrameChangeCheck, patchHumanMeshCache, patchHumanSkip, type MeshCache, type SkipTf } from './human-skip.js';
import { I420Frame } from './yuv.js';

export type { HumanFace, RgbImage } from '@vitals/tracker';

const require = createRequire(import.meta.url);

interface HumanTensor {
  shape: number[];
  dispose(): void;
  data(): Promise<ArrayLike<number>>;
}
interface HumanTf extends SkipTf {
  tensor(values: Float32Array, shape: number[], dtype: 'float32'): HumanTensor;
  zeros(shape: number[], dtype: 'float32'): HumanTensor;
  backend(): { typedArrayFromHeap?(t: HumanTensor): Float32Array | Int32Array | Uint8Array };
  io: { registerLoadRouter(router: (url: string | string[]) => unknown): void };
  getBackend(): string;
}
interface HumanInstance {
  version: string;
  tf: HumanTf;
  load(): Promise<void>;
  detect(input: HumanTensor, config: object): Promise<{ face: HumanFace[]; error?: string | null }>;
  models: { loaded(): string[]; models: Record<string, ReplayModel | null | undefined> };
}

/** Human's merged config as its frame-change check sees it (the parts we read). */
interface SkipConfig {
  cacheSensitivity?: number;
  face?: { detector?: { skipFrames?: number; skipTime?: number } };
}

/** Where a separate instance's frame-change check goes (set once the instance is built). */
interface SkipHook {
  skip?: (config: SkipConfig, input: HumanTensor) => Promise<boolean>;
  /** FaceMesh's detector cache of the evaluated bundle, when the bundle has the one we know. */
  meshCache?: MeshCache;
}

export interface HumanRuntime {
  readonly human: HumanInstance;
  readonly version: string;
  readonly modelDir: string;
  readonly loaded: string[];
  runExclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Builds an input tensor from an RGB image; the caller disposes it. */
  tensorFrom(image: RgbImage): HumanTensor;
  /** One tracking detection on `image` (a leased instance: its frame-change check runs on the bytes). */
  detectRgb(image: RgbImage, config: object): Promise<{ face: HumanFace[]; error?: string | null }>;
  /**
   * The aux instance only (`loadHuman`; undefined on a tracker's): one detection whose FaceMesh
   * starts from `box` instead of running BlazeFace first. Nothing of it is kept for the next call.
   */
  detectFromBox?(image: RgbImage, box: SeedBox, config: object): Promise<{ face: HumanFace[]; error?: string | null }>;
  /**
   * The aux instance only: the boxes BlazeFace gave FaceMesh in the last `detectRgb` (enlarged and
   * squared by Human, in pixels), what `detectFromBox` takes; empty when it found no face.
   */
  detectorBoxes?(): SeedBox[];
}

/** A face box in pixels, as Human's detector gives FaceMesh (square, the face with its margin). */
export interface SeedBox {
  startPoint: [number, number];
  endPoint: [number, number];
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
    // detectRgb makes what it reads of a frame whose RGB is made on demand (the whole frame, or for
    // I420 frames only what Human reads).
    preparesFrames: true,
    detectRgb: (image, config) => rt.runExclusive(() => rt.detectRgb(image, config)),
    release() {
      if (!leased) return;
      leased = false;
      if (idle.length < 4) idle.push(rt);
    },
  };
}

/** Loads Human once per process (about 0.3 s and ~60 MB); later calls share it. */
export function loadHuman(): Promise<HumanRuntime> {
  runtime ??= create(false, true).catch((err: unknown) => {
    runtime = undefined;
    throw err;
  });
  return runtime;
}

async function create(separate = false, seedable = false): Promise<HumanRuntime> {
  const dir = humanPackageDir();
  const modelDir = path.join(dir, 'models');
  const wasmDir = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm')) + path.sep;
  const main = path.join(dir, 'dist', 'human.node-wasm.js');
  // A separate instance is a fresh evaluation of Human's module (its own detector cache and model
  // handles, its frame-change check on our bytes: human-skip.ts); tfjs stays shared through
  // require's cache.
  const hook: SkipHook = {};
  const { Human } = (separate || seedable ? evaluateHuman(main, hook) : require(main)) as {
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
  // The models run their kernels without tfjs's graph executor (graph-replay.ts: the same values,
  // ~2.5 ms less CPU a FaceMesh call, ~3 ms a BlazeFace one): a tracker's two, and the shared
  // instance's four (its aux analyses: ~6 ms less an image).
  for (const name of separate ? TRACKER_MODELS : [...TRACKER_MODELS, 'iris', 'emotion']) {
    const model = human.models.models[name];
    if (model) replayKernels(model, human.tf as unknown as ReplayTf);
  }
  // One float buffer per instance, reused: tfjs-wasm copies the values into its heap at once.
  let floats = new Float32Array(0);
  const tf = human.tf;
  const check = new FrameChangeCheck(tf);
  // The image of the detection under way (the hook's bytes) and one input tensor per instance,
  // rewritten in place in tfjs-wasm's heap for each frame of the same size.
  let current: Uint8Array | null = null;
  let input: { tensor: HumanTensor; width: number; height: number } | null = null;
  // An I420 frame whose values reach the tensor only where Human reads them (fillWhole, fillBoxes).
  let lazy: { frame: I420Frame; whole: boolean } | null = null;
  const meshCache = hook.meshCache;
  // The aux instance: what BlazeFace gives FaceMesh is recorded (Human assigns its cache's boxes
  // twice a call: the detector's, then the ones re-centred on the mesh for the next call), and
  // FaceMesh can be handed a box to start from (detectFromBox).
  const seeds = seedable && meshCache ? seedsOf(meshCache) : null;
  const heapOf = (tensor: HumanTensor, n: number): Float32Array => {
    const heap = tf.backend().typedArrayFromHeap?.(tensor);
    if (!(heap instanceof Float32Array) || heap.length !== n)
      throw new Error('tfjs backend without a float32 heap view');
    return heap;
  };
  /** The whole frame into the tensor (a full detection reads all of it; so does the exact check). */
  const fillWhole = (): void => {
    if (!lazy || lazy.whole || !input) return;
    lazy.frame.prepareRegion(null);
    heapOf(input.tensor, lazy.frame.data.length).set(lazy.frame.data);
    lazy.whole = true;
  };
  /**
   * The pixels a tracking call reads into the tensor: FaceMesh crops each cached box
   * (`cropAndResize`, bilinear: the box's pixels and the next row and column), so each box with two
   * pixels of margin; the rest of the tensor keeps older frames' values, which nothing reads.
   */
  const fillBoxes = (boxes: MeshCache['boxes']): void => {
    if (!lazy || lazy.whole || !input) return;
    const { frame } = lazy;
    const { width: w, height: h, data } = frame;
    const heap = heapOf(input.tensor, data.length);
    for (const b of boxes) {
      const x0 = Math.max(0, Math.floor(Math.min(b.startPoint[0], b.endPoint[0])) - 2);
      const y0 = Math.max(0, Math.floor(Math.min(b.startPoint[1], b.endPoint[1])) - 2);
      const x1 = Math.min(w, Math.ceil(Math.max(b.startPoint[0], b.endPoint[0])) + 2);
      const y1 = Math.min(h, Math.ceil(Math.max(b.startPoint[1], b.endPoint[1])) + 2);
      if (!(x1 > x0 && y1 > y0)) continue;
      frame.prepareRegion({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 });
      for (let y = y0; y < y1; y++) {
        const from = (y * w + x0) * 3;
        heap.set(data.subarray(from, (y * w + x1) * 3), from);
      }
    }
  };
  /** Human's predict tracks from its cache exactly when (facemesh.ts `predict`): cache allowed, boxes kept, counts not run out. */
  const tracksFromCache = (config: SkipConfig, allowed: boolean): boolean => {
    if (!allowed || !meshCache || meshCache.boxes.length === 0) return false;
    const d = config.face?.detector;
    const skipFrame = meshCache.skipped < (d?.skipFrames || 0);
    // Human's clock is performance.now(); a minute of margin keeps us on the safe side of it.
    const skipTime = (d?.skipTime || 0) - 60_000 > performance.now() - meshCache.timestamp;
    return skipFrame && skipTime;
  };
  // A detection from a given box (detectFromBox): our frame check allows Human's cache.
  let seeded = false;
  hook.skip = async (config, tensor) => {
    if (seeded) return true;
    if (lazy) {
      const allowed = await check.skipI420(config.cacheSensitivity, tensor, lazy.frame, fillWhole);
      if (tracksFromCache(config, allowed)) fillBoxes(meshCache!.boxes);
      else fillWhole();
      return allowed;
    }
    if (!current) throw new Error('frame-change check outside a detection');
    return check.skip(config.cacheSensitivity, tensor, current);
  };
  const tensorFrom = (image: RgbImage): HumanTensor => {
    const { width, height } = image;
    const n = width * height * 3;
    if (floats.length !== n) floats = new Float32Array(n);
    // float32 (0-255) spares Human's own int-to-float cast of the whole frame.
    if (image.data.length === n) floats.set(image.data);
    else return tf.tensor(new Float32Array(image.data), [1, height, width, 3], 'float32');
    return tf.tensor(floats, [1, height, width, 3], 'float32');
  };
  /** The instance's `[height, width, 3]` input tensor for this size (Human adds the batch axis without a copy). */
  const tensorOf = (width: number, height: number): HumanTensor => {
    if (!input || input.width !== width || input.height !== height) {
      input?.tensor.dispose();
      input = { tensor: tf.zeros([height, width, 3], 'float32'), width, height };
    }
    return input.tensor;
  };
  /** The image's values in the input tensor. */
  const inputOf = (image: RgbImage): HumanTensor => {
    const tensor = tensorOf(image.width, image.height);
    heapOf(tensor, image.data.length).set(image.data);
    return tensor;
  };
  // Lazy input needs both patches: our check decides, and we see the boxes FaceMesh will crop.
  const lazyCapable = hook.meshCache !== undefined && separate;
  const detectRgbNow = async (
    image: RgbImage,
    config: object,
  ): Promise<{ face: HumanFace[]; error?: string | null }> => {
    if (image.data.length !== image.width * image.height * 3 || (image.channels ?? 3) !== 3) {
      throw new Error('a tracking detection needs an RGB image');
    }
    if (lazyCapable && image instanceof I420Frame) {
      // The frame's RGB and the tensor's values are made in the frame-change check, where Human
      // has decided what it will read: the whole frame for a full detection, the cached boxes
      // for a tracking call (issue 18: ~3-4 ms of conversion and copies less per tracking call).
      lazy = { frame: image, whole: false };
      try {
        return await human.detect(tensorOf(image.width, image.height), config);
      } finally {
        lazy = null;
      }
    }
    // Frames whose RGB is made on demand are made whole here (the detector reads them itself).
    (image as { prepareRegion?: (box: null) => void }).prepareRegion?.(null);
    current = image.data;
    try {
      return await human.detect(inputOf(image), config);
    } finally {
      current = null;
    }
  };
  return {
    human,
    version: human.version,
    modelDir,
    loaded,
    runExclusive,
    tensorFrom,
    detectFromBox: seeds
      ? async (image, box, config) => {
          const cfg = config as { face?: { detector?: object } };
          const face = cfg.face ?? {};
          // FaceMesh crops its cached boxes when the frame check allows the cache (ours does, for
          // this call) and neither count has run out (facemesh.ts `predict`).
          const fromCache = {
            ...cfg,
            face: { ...face, detector: { ...face.detector, skipFrames: 1, skipTime: 3_600_000 } },
          };
          seeds.setBoxes([
            {
              startPoint: [box.startPoint[0], box.startPoint[1]],
              endPoint: [box.endPoint[0], box.endPoint[1]],
              confidence: 1,
              // What Human's detector boxes also carry (read while the face is assembled).
              landmarks: [],
              size: [box.endPoint[0] - box.startPoint[0], box.endPoint[1] - box.startPoint[1]],
            },
          ]);
          seeded = true;
          try {
            return await detectRgbNow(image, fromCache);
          } finally {
            seeded = false;
            seeds.setBoxes([]);
          }
        }
      : undefined,
    detectorBoxes: seeds
      ? () => seeds.detected.map((b) => ({ startPoint: b.startPoint, endPoint: b.endPoint }))
      : undefined,
    async detectRgb(image, config) {
      seeds?.begin();
      return detectRgbNow(image, config);
    },
  };
}

/**
 * Evaluates Human's bundle as a module of its own, with its frame-change check handed to `hook`
 * (human-skip.ts); unpatched when the bundle's check is not the one we know.
 */
function evaluateHuman(main: string, hook: SkipHook): unknown {
  const source = readFileSync(main, 'utf8');
  const patched = patchHumanSkip(source);
  const vitalsSkip: SkipHook['skip'] = (config, input) => {
    if (!hook.skip) throw new Error('frame-change check called before the instance was ready');
    return hook.skip(config, input);
  };
  // FaceMesh's cache is exposed only together with our check (lazy input needs both).
  const withCache = patched ? patchHumanMeshCache(patched) : null;
  const module = {
    exports: {} as unknown,
    vitalsSkip: patched ? vitalsSkip : undefined,
    vitalsMeshCache: undefined as MeshCache | undefined,
  };
  const wrapper = vm.runInThisContext(
    `(function (exports, require, module, __filename, __dirname) {${withCache ?? patched ?? source}\n})`,
    { filename: main },
  ) as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(main), module, main, path.dirname(main));
  if (withCache && module.vitalsMeshCache && Array.isArray(module.vitalsMeshCache.boxes)) {
    hook.meshCache = module.vitalsMeshCache;
  }
  return module.exports;
}

/**
 * FaceMesh's cache of the aux instance with its `boxes` behind an accessor: the first boxes Human
 * stores after `begin()` are BlazeFace's (copied into `detected`), and `setBoxes` hands FaceMesh a
 * box to start from, with the counts that let it use it (or none: `[]`).
 */
function seedsOf(cache: MeshCache): {
  detected: SeedBox[];
  begin(): void;
  setBoxes(boxes: (SeedBox & { confidence: number; landmarks: number[][]; size: [number, number] })[]): void;
} {
  let boxes = cache.boxes;
  let recording = false;
  const seeds = {
    detected: [] as SeedBox[],
    begin() {
      seeds.detected = [];
      recording = true;
    },
    setBoxes(next: (SeedBox & { confidence: number; landmarks: number[][]; size: [number, number] })[]) {
      boxes = next as unknown as MeshCache['boxes'];
      cache.skipped = next.length ? 0 : Number.MAX_SAFE_INTEGER;
      cache.timestamp = next.length ? performance.now() : 0;
      recording = false;
    },
  };
  Object.defineProperty(cache, 'boxes', {
    configurable: true,
    enumerable: true,
    get: () => boxes,
    set(v: MeshCache['boxes']) {
      if (recording) {
        recording = false;
        seeds.detected = v.map((b) => ({
          startPoint: [b.startPoint[0], b.startPoint[1]],
          endPoint: [b.endPoint[0], b.endPoint[1]],
        }));
      }
      boxes = v;
    },
  });
  return seeds;
}
