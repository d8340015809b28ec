/**
 * Human in the page: the same detector family and configuration as the video pipeline
 * (`@vitals/tracker`'s HUMAN_BASE_CONFIG; BlazeFace + FaceMesh on tfjs-wasm), with every model and
 * WASM file taken from the bundle the grant unlocked (bundle.ts, SHA-256 checked). Human never
 * fetches anything itself: its model base path is a private `vitals-bundle://` scheme answered by a
 * tfjs IO router from memory, and the WASM binaries are handed to tfjs as blob: URLs of the verified
 * bytes. No CDN, no network beyond the service.
 */
import { HUMAN_BASE_CONFIG, type HumanFace, type HumanSession, type RgbImage } from '@vitals/tracker';
import type { LoadedBundle } from './bundle.js';

interface Tensor {
  dispose(): void;
}
interface HumanLike {
  version: string;
  tf: {
    tensor(values: Float32Array, shape: number[], dtype: string): Tensor;
    io: { registerLoadRouter(router: (url: string | string[]) => unknown): void };
    getBackend(): string;
  };
  load(): Promise<void>;
  init(): Promise<void>;
  detect(input: Tensor, config: object): Promise<{ face: HumanFace[]; error?: string | null }>;
  models: { loaded(): string[] };
}

const SCHEME = 'vitals-bundle://';

let routed: Map<string, Uint8Array> | null = null;

/** tfjs model artifacts of `<name>.json` and its weight shards, from the verified bundle bytes. */
function artifacts(files: Map<string, Uint8Array>, url: string): unknown {
  const name = url.slice(url.lastIndexOf('/') + 1);
  const json = files.get(name);
  if (!json) throw new Error(`model ${name} is not in the bundle`);
  const model = JSON.parse(new TextDecoder().decode(json)) as {
    modelTopology: unknown;
    format?: string;
    generatedBy?: string;
    convertedBy?: string;
    signature?: unknown;
    userDefinedMetadata?: unknown;
    weightsManifest: { paths: string[]; weights: unknown[] }[];
  };
  const specs: unknown[] = [];
  const parts: Uint8Array[] = [];
  for (const group of model.weightsManifest) {
    specs.push(...group.weights);
    for (const p of group.paths) {
      const part = files.get(p);
      if (!part) throw new Error(`weights ${p} are not in the bundle`);
      parts.push(part);
    }
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const weightData = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    weightData.set(p, off);
    off += p.length;
  }
  return {
    modelTopology: model.modelTopology,
    format: model.format,
    generatedBy: model.generatedBy,
    convertedBy: model.convertedBy,
    signature: model.signature,
    userDefinedMetadata: model.userDefinedMetadata,
    weightSpecs: specs,
    weightData: weightData.buffer,
  };
}

/**
 * Loads Human on tfjs-wasm from the bundle (once per page: Human keeps its tracking state in module
 * state, so the page has one tracker at a time, and each measurement's first call resets it).
 */
export async function loadBrowserHuman(bundle: LoadedBundle): Promise<HumanSession & { loadMs: number }> {
  const t0 = performance.now();
  const mod = (await import('@vladmandic/human')) as unknown as {
    Human: new (config: object) => HumanLike;
  };
  const wasm = (name: string): string => {
    const bytes = bundle.files.get(name);
    if (!bytes) throw new Error(`${name} is not in the bundle`);
    return URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/wasm' }));
  };
  const simd = wasm('tfjs-backend-wasm-simd.wasm');
  const human = new mod.Human({
    ...HUMAN_BASE_CONFIG,
    face: { ...HUMAN_BASE_CONFIG.face, iris: { enabled: false }, emotion: { enabled: false } },
    backend: 'wasm',
    // tfjs accepts a map of binary name to URL; the threaded build is never chosen without
    // cross-origin isolation, so it points at the SIMD one and the bundle need not carry it.
    wasmPath: {
      'tfjs-backend-wasm.wasm': wasm('tfjs-backend-wasm.wasm'),
      'tfjs-backend-wasm-simd.wasm': simd,
      'tfjs-backend-wasm-threaded-simd.wasm': simd,
    },
    wasmPlatformFetch: false,
    modelBasePath: `${SCHEME}models/`,
    cacheModels: false,
  });
  const first = routed === null;
  routed = bundle.files;
  if (first) {
    human.tf.io.registerLoadRouter((url) =>
      typeof url === 'string' && url.startsWith(SCHEME) ? { load: async () => artifacts(routed!, url) } : null,
    );
  }
  await human.init();
  await human.load();
  const loaded = human.models.loaded();
  if (!loaded.includes('blazeface') || !loaded.includes('facemesh'))
    throw new Error(`face models did not load (loaded: ${loaded.join(', ') || 'none'})`);
  return {
    version: human.version,
    backend: human.tf.getBackend(),
    loadMs: performance.now() - t0,
    async detectRgb(image: RgbImage, config: object) {
      // float32 RGB (0-255), as the video pipeline gives Human; RGBA frames drop alpha here, on
      // analysed frames only (2-4 a second), never on every frame.
      const px = image.data;
      const c = image.channels ?? 3;
      const n = image.width * image.height;
      const f = new Float32Array(n * 3);
      for (let i = 0, j = 0, k = 0; i < n; i++, j += 3, k += c) {
        f[j] = px[k];
        f[j + 1] = px[k + 1];
        f[j + 2] = px[k + 2];
      }
      const input = human.tf.tensor(f, [1, image.height, image.width, 3], 'float32');
      try {
        return await human.detect(input, config);
      } finally {
        input.dispose();
      }
    },
  };
}
