/**
 * The tracker's Web Worker (built to dist/browser/tracker-worker.js): Human and the shared tracker
 * (@vitals/tracker) run here, off the page's main thread, so a 60-120 ms detection never holds up
 * the camera's frames; the page only draws each frame and hands its pixels over. Frames are taken
 * strictly in order (one at a time), and the worker reports after each so the page can bound the
 * backlog. Detection on a budget (detect-budget.ts): when the detector's time would pass
 * `detectBudget` of the wall clock, the analysis rate steps down from 4 to 2 Hz, and back up when
 * the detector is fast again.
 */
import { createHumanFaceDetector, FaceTracker, type HumanSession, type TrackerFrame } from '@vitals/tracker';
import { DetectBudget } from './detect-budget.js';
import { loadBrowserHuman } from './human-browser.js';
import { packetBytes } from './packets.js';
import type { FromTracker, ToTracker } from './tracker-protocol.js';

interface WorkerScope {
  onmessage: ((e: { data: ToTracker }) => void) | null;
  postMessage(m: FromTracker, transfer?: Transferable[]): void;
}
const scope = globalThis as unknown as WorkerScope;

let human: (HumanSession & { loadMs: number }) | null = null;
let tracker: FaceTracker | null = null;
let out: ArrayBuffer[] = [];
let stats = { detectMs: 0, detectCalls: 0, workMs: 0, frames: 0 };
let chain: Promise<void> = Promise.resolve();

/** Mean BT.601 luma (0..1) of every 16th pixel: the guidance when no face is tracked. */
function lumaOf(rgba: Uint8Array, n: number): number {
  let luma = 0;
  for (let i = 0; i < n; i += 16) luma += 0.299 * rgba[i * 4] + 0.587 * rgba[i * 4 + 1] + 0.114 * rgba[i * 4 + 2];
  return luma / Math.ceil(n / 16) / 255;
}

async function handle(m: ToTracker): Promise<void> {
  if (m.t === 'init') {
    const files = new Map(Object.entries(m.files).map(([k, v]) => [k, new Uint8Array(v)]));
    human = await loadBrowserHuman({ files, modelsVersion: '', transferBytes: 0 });
    scope.postMessage({ t: 'ready', version: human.version, backend: human.backend, loadMs: human.loadMs });
  } else if (m.t === 'start') {
    if (!human) throw new Error('init first');
    stats = { detectMs: 0, detectCalls: 0, workMs: 0, frames: 0 };
    out = [];
    const budget = new DetectBudget(m.detectBudget);
    const t: FaceTracker = new FaceTracker({
      detector: createHumanFaceDetector(human),
      keep: false,
      onPacket: (p) => out.push(packetBytes(p).buffer as ArrayBuffer),
      onAnalysed: (a) => {
        stats.detectMs += a.ms;
        stats.detectCalls++;
        const hz = budget.record(a.ms);
        if (hz !== t.analysisHz) t.setAnalysisHz(hz);
      },
    });
    tracker = t;
  } else if (m.t === 'frame') {
    if (!tracker) return;
    const t0 = performance.now();
    const rgba = new Uint8Array(m.rgba);
    const luma = lumaOf(rgba, m.width * m.height);
    // RGBA as the canvas gave it: the crop reads the face region only, Human converts analysed frames.
    const frame: TrackerFrame = {
      index: m.index,
      tSec: m.tSec,
      data: rgba,
      width: m.width,
      height: m.height,
      channels: 4,
    };
    await tracker.push(frame);
    stats.workMs += performance.now() - t0;
    stats.frames++;
    const cur = tracker.packetizer.current;
    const packets = out;
    out = [];
    scope.postMessage(
      {
        t: 'out',
        index: m.index,
        packets,
        current: cur ? { widthFraction: cur.widthFraction, brightness: cur.brightness, motion: cur.motion } : null,
        frameLuma: luma,
      },
      packets,
    );
  } else if (m.t === 'finish') {
    if (!tracker) return;
    await tracker.finish();
    const packets = out;
    out = [];
    scope.postMessage(
      {
        t: 'finished',
        packets,
        framesWithFace: tracker.packetizer.framesWithFace,
        detectMsPerCall: stats.detectCalls ? stats.detectMs / stats.detectCalls : 0,
        analysisHz: tracker.analysisHz,
        msPerFrame: stats.frames ? stats.workMs / stats.frames : 0,
      },
      packets,
    );
    tracker = null;
  }
}

scope.onmessage = (e) => {
  chain = chain
    .then(() => handle(e.data))
    .catch((err: unknown) =>
      scope.postMessage({ t: 'error', message: err instanceof Error ? err.message : String(err) }),
    );
};
