// Builds the browser files into dist/browser (CONTRACT-BROWSER "Static files of the page"), run at
// install (`prepare`): vitals-capture.js (ESM API + <vitals-measure>), tracker-worker.js (Human and
// the tracker), estimator-worker.js (the on-device engine), demo.js/.html/.css, and the shared chunks (Human + tfjs is its own chunk,
// loaded when a capture prepares). Everything is relative to /capture/; nothing comes from a CDN.
import { build } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, '..');
const out = path.join(pkg, 'dist', 'browser');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
await build({
  entryPoints: {
    'vitals-capture': path.join(pkg, 'src/browser.ts'),
    'estimator-worker': path.join(pkg, 'src/estimator-worker.ts'),
    'tracker-worker': path.join(pkg, 'src/tracker-worker.ts'),
    demo: path.join(pkg, 'src/demo.ts'),
  },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022', 'chrome109', 'safari16', 'firefox115'],
  // Workspace packages from their TypeScript sources (as the tests do), browser entries.
  conditions: ['source', 'browser'],
  mainFields: ['browser', 'module', 'main'],
  chunkNames: 'chunk-[hash]',
  minify: true,
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
});
for (const f of ['demo.html', 'demo.css', 'favicon.svg'])
  await copyFile(path.join(pkg, 'static', f), path.join(out, f));
console.log(`@vitals/capture: browser files built in ${path.relative(process.cwd(), out) || out}`);
