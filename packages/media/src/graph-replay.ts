/**
 * A tfjs GraphModel's kernels replayed without the graph executor (issue 18): the same kernels on
 * the same tensors in the same order, so the same float32 values, for about a third less CPU on
 * FaceMesh (the converter's per-node parameter lookups, the engine's scopes and tensor tracking).
 *
 * The first call with an input shape runs the model as usual while recording each kernel the
 * engine runs (name, attributes, and where each input comes from: the model input, an earlier
 * kernel's output, or a tensor that is neither, kept as a constant). The second call runs both the
 * model and the replay and keeps the replay only if every output value is the same bit for bit;
 * from then on calls with that shape replay the kernels directly on the backend, freeing each
 * intermediate after its last use. Anything unexpected (several inputs, named outputs, an output
 * that is the input or a constant, a mismatch) leaves the model on tfjs's own executor.
 *
 * Only for models without control flow whose kernels depend on shapes alone (Human's BlazeFace
 * and FaceMesh: convolutions, element-wise ops, reshapes); `graph-replay.test.ts` checks both.
 */

interface TensorInfo {
  dataId: object;
  shape: number[];
  dtype: string;
}
interface Tensor extends TensorInfo {
  dispose(): void;
  clone(): Tensor;
  dataSync(): ArrayLike<number>;
}
interface Backend {
  disposeData(dataId: object, force?: boolean): boolean;
  typedArrayFromHeap(t: TensorInfo): Float32Array | Int32Array | Uint8Array;
}
interface Engine {
  runKernel(name: string, inputs: Record<string, Tensor | null>, attrs: object): Tensor | Tensor[];
  makeTensorFromTensorInfo(info: TensorInfo, backend?: Backend): Tensor;
}
interface Kernel {
  kernelFunc(args: {
    inputs: Record<string, TensorInfo | null>;
    attrs: object;
    backend: Backend;
  }): TensorInfo | TensorInfo[];
}
export interface ReplayTf {
  engine(): Engine;
  backend(): Backend;
  getBackend(): string;
  getKernel(name: string, backend: string): Kernel | undefined;
  keep<T>(t: T): T;
}
export interface ReplayModel {
  execute(input: Tensor | Tensor[] | Record<string, Tensor>, outputs?: string | string[]): Tensor | Tensor[];
  weights?: Record<string, Tensor[]>;
}

type Source =
  { kind: 'input' } | { kind: 'const'; tensor: TensorInfo | null } | { kind: 'step'; step: number; index: number };
interface Step {
  kernel: Kernel;
  inputs: [string, Source][];
  /** The kernel takes its inputs as a list (Concat, Pack, AddN), not by name. */
  list: boolean;
  attrs: object;
  /** Outputs of this or earlier steps (step, index pairs) last used by this step, or never used. */
  free: number[];
  /** How many outputs the kernel returns. */
  outputs: number;
}
interface Plan {
  steps: Step[];
  outputs: { step: number; index: number }[];
  array: boolean;
  /** Kept constants (tensors the run created that were not kernel outputs). */
  owned: Tensor[];
  verified: boolean;
}

/** Calls so far: replayed, and input shapes left to tfjs's executor (not replayable, or a mismatch). */
export interface ReplayStats {
  replayed: number;
  rejected: number;
}

/** Replays `model`'s kernels after a verified first call per input shape (see the module note). */
export function replayKernels(model: ReplayModel, tf: ReplayTf): ReplayStats {
  const stats: ReplayStats = { replayed: 0, rejected: 0 };
  const execute = model.execute.bind(model);
  const plans = new Map<string, Plan | null>();
  const weights = new Set<object>();
  for (const list of Object.values(model.weights ?? {})) for (const w of list) weights.add(w.dataId);
  model.execute = (input, outputs) => {
    if (outputs !== undefined || !isTensor(input) || tf.getBackend() !== 'wasm') return execute(input, outputs);
    const key = `${input.dtype}:${input.shape.join('x')}`;
    const plan = plans.get(key);
    if (plan === null) return execute(input);
    if (plan === undefined) {
      const recorded = record(tf, execute, input, weights);
      plans.set(key, recorded.plan);
      if (!recorded.plan) stats.rejected++;
      return recorded.result;
    }
    if (plan.verified) {
      stats.replayed++;
      return replay(tf, plan, input);
    }
    // Second call: both, compared bit for bit. A replay that throws (a kernel called in a way the
    // recording did not foresee) is a mismatch too: the model stays on the executor.
    const result = execute(input);
    let mine: Tensor | Tensor[];
    try {
      mine = replay(tf, plan, input);
    } catch {
      for (const t of plan.owned) t.dispose();
      plans.set(key, null);
      stats.rejected++;
      return result;
    }
    const theirs = Array.isArray(result) ? result : [result];
    const ours = Array.isArray(mine) ? mine : [mine];
    const same = theirs.length === ours.length && theirs.every((t, i) => sameBits(tf, t, ours[i]));
    for (const t of ours) t.dispose();
    if (same) plan.verified = true;
    else {
      for (const t of plan.owned) t.dispose();
      plans.set(key, null);
      stats.rejected++;
    }
    return result;
  };
  return stats;
}

function isTensor(x: unknown): x is Tensor {
  return typeof x === 'object' && x !== null && 'dataId' in x && 'shape' in x && !Array.isArray(x);
}

function sameBits(tf: ReplayTf, a: Tensor, b: Tensor): boolean {
  if (a.dtype !== b.dtype || a.shape.join() !== b.shape.join()) return false;
  const x = tf.backend().typedArrayFromHeap(a);
  const y = tf.backend().typedArrayFromHeap(b);
  const u = new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  const v = new Uint8Array(y.buffer, y.byteOffset, y.byteLength);
  if (u.length !== v.length) return false;
  for (let i = 0; i < u.length; i++) if (u[i] !== v[i]) return false;
  return true;
}

/** One ordinary run with the engine's kernels recorded; the plan is null when it cannot be replayed. */
function record(
  tf: ReplayTf,
  execute: (input: Tensor) => Tensor | Tensor[],
  input: Tensor,
  weights: Set<object>,
): { result: Tensor | Tensor[]; plan: Plan | null } {
  const engine = tf.engine();
  const steps: Step[] = [];
  const produced = new Map<Tensor, { step: number; index: number }>();
  const owned: Tensor[] = [];
  let depth = 0;
  let replayable = true;
  const runKernel = engine.runKernel;
  engine.runKernel = function (this: Engine, name, inputs, attrs) {
    if (depth > 0) return runKernel.call(this, name, inputs, attrs);
    const kernel = tf.getKernel(name, 'wasm');
    const sources: [string, Source][] = [];
    depth++;
    try {
      for (const [k, t] of Object.entries(inputs)) {
        if (t == null) sources.push([k, { kind: 'const', tensor: null }]);
        else if (t === input) sources.push([k, { kind: 'input' }]);
        else if (produced.has(t)) sources.push([k, { kind: 'step', ...produced.get(t)! }]);
        else if (weights.has(t.dataId)) sources.push([k, { kind: 'const', tensor: t }]);
        else {
          // Created during the run (a scalar, a shape): its value now, kept.
          const kept = tf.keep(t.clone());
          owned.push(kept);
          sources.push([k, { kind: 'const', tensor: kept }]);
        }
      }
      const out = runKernel.call(this, name, inputs, attrs);
      const outs = Array.isArray(out) ? out : [out];
      outs.forEach((t, index) => produced.set(t, { step: steps.length, index }));
      if (!kernel) replayable = false;
      else
        steps.push({
          kernel,
          inputs: sources,
          list: Array.isArray(inputs),
          attrs: { ...attrs },
          free: [],
          outputs: outs.length,
        });
      return out;
    } finally {
      depth--;
    }
  };
  let result: Tensor | Tensor[];
  try {
    result = execute(input);
  } finally {
    engine.runKernel = runKernel;
  }
  const list = Array.isArray(result) ? result : [result];
  const outputs = list.map((t) => produced.get(t));
  if (!replayable || steps.length === 0 || outputs.some((o) => o === undefined)) {
    for (const t of owned) t.dispose();
    return { result, plan: null };
  }
  const outs = outputs as { step: number; index: number }[];
  // An output that is the input or a constant under another shape (a reshape) stays with tfjs.
  const foreign = new Set<object>([input.dataId, ...owned.map((t) => t.dataId), ...weights]);
  if (list.some((t) => foreign.has(t.dataId))) {
    for (const t of owned) t.dispose();
    return { result, plan: null };
  }
  // Each intermediate is freed after its last use; the outputs are not.
  const last = new Map<string, number>();
  steps.forEach((s, i) => {
    for (const [, src] of s.inputs) if (src.kind === 'step') last.set(`${src.step}:${src.index}`, i);
  });
  // An output no later step reads (a kernel's second output the model ignores) is freed at once.
  steps.forEach((s, i) => {
    for (let index = 0; index < s.outputs; index++) if (!last.has(`${i}:${index}`)) last.set(`${i}:${index}`, i);
  });
  for (const o of outs) last.delete(`${o.step}:${o.index}`);
  const keepOut = new Set(outs.map((o) => `${o.step}:${o.index}`));
  for (const [key, i] of last) {
    if (keepOut.has(key)) continue;
    const [s, index] = key.split(':').map(Number);
    steps[i].free.push(s, index);
  }
  return { result, plan: { steps, outputs: outs, array: Array.isArray(result), owned, verified: false } };
}

function replay(tf: ReplayTf, plan: Plan, input: Tensor): Tensor | Tensor[] {
  const backend = tf.backend();
  const engine = tf.engine();
  const env: (TensorInfo | null)[][] = [];
  const x: TensorInfo = { dataId: input.dataId, shape: input.shape, dtype: input.dtype };
  const used = new Set<string>();
  try {
    for (const step of plan.steps) {
      const inputs: Record<string, TensorInfo | null> = step.list
        ? ([] as (TensorInfo | null)[] as unknown as Record<string, TensorInfo | null>)
        : {};
      for (const [k, src] of step.inputs) {
        inputs[k] = src.kind === 'input' ? x : src.kind === 'const' ? src.tensor : env[src.step][src.index];
      }
      const out = step.kernel.kernelFunc({ inputs, attrs: step.attrs, backend });
      env.push(Array.isArray(out) ? out : [out]);
      for (let i = 0; i < step.free.length; i += 2) {
        const row = env[step.free[i]];
        const info = row[step.free[i + 1]];
        if (info) backend.disposeData(info.dataId);
        row[step.free[i + 1]] = null;
      }
    }
    const tensors = plan.outputs.map((o) => {
      const info = env[o.step][o.index]!;
      used.add(`${o.step}:${o.index}`);
      return engine.makeTensorFromTensorInfo(info, backend);
    });
    return plan.array ? tensors : tensors[0];
  } catch (err) {
    for (const [s, row] of env.entries()) {
      row.forEach((info, i) => {
        if (info && !used.has(`${s}:${i}`)) backend.disposeData(info.dataId);
      });
    }
    throw err;
  }
}
