/**
 * Starts a worker thread on a module of this repository, from its built JavaScript (production:
 * `dist/**.js`, run by Node as is) or from its TypeScript source (tests and `tsx` scripts, where
 * the calling module itself is a `.ts` file). A worker thread is a plain Node isolate: vitest's
 * transform does not reach it and, on Node 20, neither do `--import` loaders in `execArgv` nor a
 * `.ts` entry. So a source entry is started through a one-line bootstrap that registers tsx's ESM
 * hooks (`tsx/esm/api`, a dev dependency) and then imports it, with the `source` export condition
 * that vitest and `tsx --conditions=source` use, so `@vitals/*` resolve to their sources too
 * (docs/media.md, "Worker threads").
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type ResourceLimits } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/**
 * The URL of the module `name` (without extension) beside `callerUrl`: `.ts` when the caller runs
 * from source, `.js` when it runs from `dist`.
 */
export function siblingModule(callerUrl: string, name: string): URL {
  return new URL(`./${name}${callerUrl.endsWith('.ts') ? '.ts' : '.js'}`, callerUrl);
}

export function spawnModuleWorker(
  entry: URL,
  opts: { resourceLimits?: ResourceLimits; workerData?: unknown } = {},
): Worker {
  const { resourceLimits, workerData } = opts;
  if (!entry.pathname.endsWith('.ts')) return new Worker(entry, { resourceLimits, workerData });
  // require.resolve picks tsx's CommonJS build of the API; its ESM twin sits beside it.
  const api = pathToFileURL(path.join(path.dirname(require.resolve('tsx/esm/api')), 'index.mjs')).href;
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, execArgv: ['--conditions=source'], resourceLimits, workerData });
}
