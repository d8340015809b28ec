// Capture benchmark (issue 15 §5): the browser capture in headless Chromium (Debian's chromium,
// playwright-core) with the fake camera playing UBFC-rPPG subject 12 (30 fps MJPEG in .bench/),
// against `vitals-server serve`: main-thread and worker cost per frame, time from page load to the
// first face crop, and the transfer sizes (gzip, as the service sends them) of the SDK, the capture
// code and the model bundle.
//
// Run: npm run bench -- capture (needs `npm install` to have built packages/capture/dist/browser)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { resolveFfmpeg } from '../../packages/media/src/index.js';
import { chromiumPath, launchChromium } from '../testing/chromium.js';
import { REPO_ROOT, startServe, type Served } from '../testing/serve.js';
import { VitalsClient } from '../../packages/sdk/src/index.js';

const BENCH_DIR = path.join(REPO_ROOT, '.bench');
const DIST = path.join(REPO_ROOT, 'packages/capture/dist/browser');
const DATA = [path.resolve(REPO_ROOT, '../shared/data'), path.resolve(REPO_ROOT, '../../shared/data')].find((d) =>
  existsSync(path.join(d, 'ubfc2')),
);
const CAPTURE_SEC = 20;

const kb = (n: number): string => `${(n / 1024).toFixed(0)} KB`;
const gz = (b: Uint8Array): number => gzipSync(b, { level: 9 }).length;
const f = (v: number | undefined, d = 1): string => (v === undefined ? '–' : v.toFixed(d));

/** Bytes the service sends for `url` to a browser that accepts gzip (its Content-Length). */
async function sent(url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(url, { headers: { 'Accept-Encoding': 'gzip, deflate, br', ...headers } });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  const n = Number(res.headers.get('content-length'));
  await res.arrayBuffer();
  return n;
}

export async function sizes(served: Served): Promise<string[]> {
  const sdk = await build({
    entryPoints: [path.join(REPO_ROOT, 'packages/sdk/src/index.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['source', 'browser'],
    write: false,
  });
  const sdkBytes = sdk.outputFiles[0].contents;
  const js = readdirSync(DIST).filter((n) => n.endsWith('.js'));
  const files = await Promise.all(
    js.map(async (n) => ({
      n,
      raw: statSync(path.join(DIST, n)).size,
      sent: await sent(`${served.baseUrl}/capture/${n}`),
    })),
  );
  const human = files.reduce((a, b) => (b.raw > a.raw ? b : a));
  const ours = files.filter((x) => x !== human && !x.n.startsWith('demo'));
  const sum = (xs: { raw: number; sent: number }[], k: 'raw' | 'sent'): number => xs.reduce((s, x) => s + x[k], 0);
  const client = new VitalsClient({ keyId: served.keyId, secret: served.secret, baseUrl: served.baseUrl });
  const grant = await client.models.grant({});
  const auth = { Authorization: `Bearer ${grant.grant}` };
  const manifest = (await (await fetch(grant.manifestUrl, { headers: auth })).json()) as {
    data: { files: { name: string; url: string; bytes: number }[] };
  };
  const tracker = [
    'blazeface.json',
    'blazeface.bin',
    'facemesh.json',
    'facemesh.bin',
    'tfjs-backend-wasm.wasm',
    'tfjs-backend-wasm-simd.wasm',
  ];
  const used = await Promise.all(
    manifest.data.files
      .filter((x) => tracker.includes(x.name))
      .map(async (x) => ({ n: x.name, raw: x.bytes, sent: await sent(new URL(x.url, grant.manifestUrl).href, auth) })),
  );
  const simdOnly = used.filter((x) => x.n !== 'tfjs-backend-wasm.wasm');
  return [
    '| what | raw | sent (gzip) |',
    '| --- | --- | --- |',
    `| SDK browser entry (\`@vitals/sdk\`, minified ESM bundle; gzip level 9, served by the customer's bundler) | ${kb(sdkBytes.length)} | ${kb(gz(sdkBytes))} |`,
    `| capture code (\`vitals-capture.js\`, both workers, shared chunks; without Human) | ${kb(sum(ours, 'raw'))} | ${kb(sum(ours, 'sent'))} |`,
    `| Human 3.3.6 with tfjs (one chunk, loaded by the tracker worker) | ${kb(human.raw)} | ${kb(human.sent)} |`,
    `| model bundle as fetched (BlazeFace, FaceMesh, both tfjs WASM binaries) | ${kb(sum(used, 'raw'))} | ${kb(sum(used, 'sent'))} |`,
    `| of which a SIMD browser needs (the plain WASM binary is the fallback) | ${kb(sum(simdOnly, 'raw'))} | ${kb(sum(simdOnly, 'sent'))} |`,
  ];
}

async function capture(): Promise<Record<string, any> | string> {
  if (!chromiumPath()) return 'Chromium not found: not measured';
  if (!DATA) return '../shared/data not found: not measured';
  mkdirSync(BENCH_DIR, { recursive: true });
  const cam = path.join(BENCH_DIR, 'capture-subject12-30fps.mjpeg');
  if (!existsSync(cam) || statSync(cam).size < 1e6)
    execFileSync(resolveFfmpeg().ffmpeg, [
      '-v',
      'error',
      '-y',
      '-i',
      path.join(DATA, 'ubfc2/subject12/vid.mp4'),
      '-t',
      '40',
      '-an',
      '-vf',
      'fps=30',
      '-q:v',
      '2',
      '-f',
      'mjpeg',
      cam,
    ]);
  const served = await startServe();
  const browser = await launchChromium({ fakeCameraFile: cam });
  try {
    const size = await sizes(served);
    const page = await browser.newPage();
    await page.goto(`${served.baseUrl}/?mode=on-device&autostart=1&durationSec=${CAPTURE_SEC}`);
    await page.evaluate(
      () =>
        new Promise((r) => {
          document.addEventListener('vitals:result', r);
          document.addEventListener('vitals:error', r);
        }),
    );
    const stats = await page.evaluate(() => (document.querySelector('vitals-measure') as any).lastOutcome?.stats ?? {});
    return { ...stats, chromium: browser.version(), size };
  } finally {
    await browser.close();
    await served.stop();
  }
}

export async function run(): Promise<string> {
  const s = await capture();
  const size: string[] = typeof s === 'string' ? [s] : s.size;
  const rows =
    typeof s === 'string'
      ? [s]
      : [
          '| figure | value |',
          '| --- | --- |',
          `| camera frames read in ${CAPTURE_SEC} s (fake camera at 30 fps) | ${s.framesRead} (${f(s.framesRead / CAPTURE_SEC)} fps), dropped for backlog ${s.framesDropped} |`,
          `| main thread per frame (the frame RGBA: \`VideoFrame.copyTo\`, else a canvas read-back) | ${f(s.mainMsPerFrame, 2)} ms |`,
          `| tracker worker per frame (tracking, crop, packets; detection averaged in) | ${f(s.trackerMsPerFrame, 2)} ms |`,
          `| detector per analysis (BlazeFace or FaceMesh tracking, tfjs-wasm ${'SIMD'}) | ${f(s.detectMsPerCall, 1)} ms, analysis rate at the end ${s.analysisHz} Hz |`,
          `| estimator worker per face crop (engine) | ${f(s.workerMsPerFrame, 3)} ms |`,
          `| page load to the first face crop (navigation start to the first type-1 packet) | ${f(s.firstCropMs / 1000, 2)} s |`,
          `| Human load in the worker (from the verified bundle) | ${f(s.humanLoadMs, 0)} ms |`,
        ];
  return [
    '## Capture',
    '',
    `\`npm run bench -- capture\` (\`scripts/bench/capture.ts\`): headless Chromium ${typeof s === 'string' ? '' : s.chromium} (Debian's package, \`--disable-gpu\`) with the fake camera playing UBFC-rPPG subject 12 (640x480 MJPEG at 30 fps), the demo page on the device for ${CAPTURE_SEC} s against \`vitals-server serve\` on the same machine. ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), load average ${f(loadavg()[0])} at the end: the machine was shared, so per-frame times include waiting for a core.`,
    '',
    ...rows,
    '',
    'Transfer sizes: the bytes the service sends (Content-Length) to a browser that accepts gzip. The service gzips the capture code and the model files once per content where gzip saves 5 % or more (all of the bundle\'s files), docs/decisions.md "Compression":',
    '',
    ...size,
    '',
  ].join('\n');
}
