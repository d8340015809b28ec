/**
 * Issue 18: a leased Human's BlazeFace and FaceMesh, and the aux analysis' four models, run their
 * kernels without tfjs's graph executor (graph-replay.ts). The values must be the executor's bit for bit, or the packets would
 * change: checked on the real models against a second copy left on the executor, over calls that
 * record, verify and replay, with no tensor left behind; and a model whose kernels depend on the
 * input's values (not replayable) must be caught by the verifying call and stay on the executor.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { replayKernels, type ReplayModel, type ReplayTf } from '../src/graph-replay.js';
import { loadHuman } from '../src/human-runtime.js';

interface Tensor {
  dataId: object;
  shape: number[];
  dtype: string;
  dispose(): void;
  clone(): Tensor;
  dataSync(): Float32Array;
}
interface Tf extends ReplayTf {
  loadGraphModel(url: string): Promise<ReplayModel>;
  tensor(values: Float32Array, shape: number[], dtype: 'float32'): Tensor;
  scalar(v: number): Tensor;
  mul(a: Tensor, b: Tensor): Tensor;
  topk(x: Tensor, k: number): { values: Tensor; indices: Tensor };
  tidy<T>(f: () => T): T;
  memory(): { numTensors: number };
  backend(): ReturnType<ReplayTf['backend']> & { numDataIds(): number };
}

let tf: Tf;
let modelDir: string;
beforeAll(async () => {
  const rt = await loadHuman();
  tf = rt.human.tf as unknown as Tf;
  modelDir = rt.modelDir;
}, 60_000);

/** Pseudo-random values in [lo, hi) (a fixed LCG: the same every run). */
function input(shape: number[], seed: number, lo: number, hi: number): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = lo + ((hi - lo) * (s >>> 8)) / 2 ** 24;
  }
  return tf.tensor(v, shape, 'float32');
}

function outputs(result: Tensor | Tensor[]): Tensor[] {
  return Array.isArray(result) ? result : [result];
}

/** The values' bits, output by output. */
function bits(result: Tensor | Tensor[]): Uint32Array[] {
  return outputs(result).map((t) => new Uint32Array(Float32Array.from(t.dataSync()).buffer));
}

describe('graph replay', () => {
  // The trackers' BlazeFace and FaceMesh, and the aux analysis' Iris (a Concat: a kernel whose
  // inputs are a list) and emotion model (one grey channel).
  for (const [name, size, channels, lo, hi] of [
    ['facemesh', 192, 3, 0, 1],
    ['blazeface', 256, 3, -1, 1],
    ['iris', 64, 3, 0, 1],
    ['emotion', 64, 1, -1, 1],
  ] as const) {
    it(`${name}: the executor's values bit for bit, no tensor left behind`, async () => {
      const url = pathToFileURL(path.join(modelDir, `${name}.json`)).href;
      const plain = await tf.loadGraphModel(url);
      const replayed = await tf.loadGraphModel(url);
      const stats = replayKernels(replayed, tf);
      let counts: [number, number] | undefined;
      for (let call = 0; call < 5; call++) {
        const x = input([1, size, size, channels], 1000 + call, lo, hi);
        const want = plain.execute(x as never) as Tensor | Tensor[];
        const got = replayed.execute(x as never) as Tensor | Tensor[];
        expect(bits(got)).toEqual(bits(want));
        expect(outputs(got).map((t) => t.shape)).toEqual(outputs(want).map((t) => t.shape));
        for (const t of [...outputs(want), ...outputs(got), x]) t.dispose();
        // From the third call on (replayed), nothing accumulates in the engine or the backend.
        const now: [number, number] = [tf.memory().numTensors, tf.backend().numDataIds()];
        if (call >= 3) expect(now).toEqual(counts);
        counts = now;
      }
      expect(stats).toEqual({ replayed: 3, rejected: 0 });
    }, 60_000);
  }

  it('a model whose kernels depend on its input values stays on the executor', () => {
    // The scalar comes from the input's data: a recorded run would replay the first call's value.
    const model: ReplayModel = {
      execute: (x) => tf.tidy(() => tf.mul(x as never, tf.scalar((x as unknown as Tensor).dataSync()[0]))) as never,
    };
    const stats = replayKernels(model, tf);
    for (let call = 0; call < 4; call++) {
      const x = input([1, 4, 4, 3], 7 + call, 1, 2);
      const first = x.dataSync()[0];
      const got = model.execute(x as never) as Tensor;
      const want = Float32Array.from(x.dataSync(), (v) => Math.fround(v * first));
      expect(Array.from(got.dataSync())).toEqual(Array.from(want));
      got.dispose();
      x.dispose();
    }
    expect(stats).toEqual({ replayed: 0, rejected: 1 });
  });

  it('a replay that throws on the verifying call leaves the model on the executor, the answer unchanged', () => {
    // Kernels that fail when replayed (as a list-input Concat did before it was handled).
    const failing: ReplayTf = {
      engine: () => tf.engine(),
      backend: () => tf.backend(),
      getBackend: () => tf.getBackend(),
      keep: (t) => tf.keep(t),
      getKernel: () => ({
        kernelFunc: () => {
          throw new Error('not replayable');
        },
      }),
    };
    const model: ReplayModel = { execute: (x) => tf.tidy(() => tf.mul(x as never, tf.scalar(3))) as never };
    const stats = replayKernels(model, failing);
    for (let call = 0; call < 4; call++) {
      const x = input([1, 4, 4, 3], 90 + call, 1, 2);
      const got = model.execute(x as never) as Tensor;
      expect(Array.from(got.dataSync())).toEqual(Array.from(x.dataSync(), (v) => Math.fround(v * 3)));
      got.dispose();
      x.dispose();
    }
    expect(stats).toEqual({ replayed: 0, rejected: 1 });
  });

  it('a kernel output the model never reads (TopK indices) is freed on every replayed call', () => {
    const model: ReplayModel = {
      execute: (x) => tf.tidy(() => tf.topk(tf.mul(x as never, tf.scalar(2)), 2).values) as never,
    };
    const stats = replayKernels(model, tf);
    let counts: [number, number] | undefined;
    for (let call = 0; call < 6; call++) {
      const x = input([1, 4, 4, 3], 50 + call, 1, 2);
      const got = model.execute(x as never) as Tensor;
      got.dispose();
      x.dispose();
      const now: [number, number] = [tf.memory().numTensors, tf.backend().numDataIds()];
      if (call >= 3) expect(now).toEqual(counts);
      counts = now;
    }
    expect(stats.replayed).toBe(4);
  });
});
