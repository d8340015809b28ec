// Engine speed: offline estimator on a 60 s, 30 fps phantom capture and the streaming estimator's
// average cost per pushed frame, each also as a ratio to a plain 3-channel mean over the same
// crops measured in the same run (the machine is shared and noisy). Returns a markdown section.
import { estimateOffline, generatePhantom, meanRgb, StreamingEstimator } from '../../packages/engine/src/index.js';
import type { Packet } from '@vitals/protocol';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { HeadlineRow, SectionOutput } from '../headline.js';

const SELF = fileURLToPath(import.meta.url);

function best(fn: () => void, reps: number): number {
  let min = Infinity;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

/** The garbage collector as a function (node --expose-gc when given, else exposed at run time). */
function collector(): () => void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) return g;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/**
 * Memory a streaming estimator holds after a capture: the growth of V8 heap + external memory
 * (ArrayBuffers included) after GC, with `n` estimators alive that were each fed the capture,
 * divided by n. What a live session's engine state costs the server (the streaming bench's
 * memory per session adds the socket, queue and session objects, and moves with session ages).
 */
function retainedKbPerEstimator(packets: Packet[], n = 40): number {
  const gc = collector();
  const used = (): number => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const base = used();
  const held: StreamingEstimator[] = [];
  for (let i = 0; i < n; i++) {
    const s = new StreamingEstimator();
    for (const p of packets) s.push(p);
    held.push(s);
  }
  const kb = (used() - base) / n / 1024;
  if (held.length !== n) throw new Error('unreachable');
  return kb;
}

/** One process's figures (times in ms, per-frame figures in µs, memory in KB). */
interface Figures {
  refMs: number;
  offlineMs: number;
  finishMs: number;
  perFrameUs: number;
  refPerFrameUs: number;
  pushMinUs: number;
  refMinUs: number;
  retainedKb: number;
  /** Face crops in the capture. */
  crops: number;
}

/**
 * Processes the figures are measured in, one after another, each fresh. One process's best of 15
 * push runs read 11.5-24.2 µs a frame across fresh runs on a quiet shared machine (2.7-6.0x its
 * reference): slow spells of the machine last longer than one process's runs, so a best-of within
 * one process cannot escape them. The section reports the median process and lists all three; a
 * spell longer than the three (seen once: 15.5, 15.6 and 19.0 µs) still shows, in every figure.
 */
const PROCESSES = 3;

function measure(): Figures {
  const { packets } = generatePhantom({ durationSec: 60, fps: 30, seed: 5 });
  const frames = packets.filter((p): p is Extract<Packet, { type: 1 }> => p.type === 1);
  const reference = (): void => {
    let s = 0;
    for (const f of frames) s += meanRgb(f.pixels).g;
    if (s < 0) throw new Error('unreachable');
  };
  // Warm up the JIT on every path.
  for (let i = 0; i < 3; i++) {
    reference();
    estimateOffline(packets);
  }
  const refMs = best(reference, 15);
  const offlineMs = best(() => estimateOffline(packets), 15);
  let pushMs = Infinity;
  let finishMs = Infinity;
  // Best of 15 like the other rows (was 7): on the shared 2-core machine a 7-run minimum of the
  // ~30 ms push loop often caught no quiet run.
  for (let i = 0; i < 15; i++) {
    const s = new StreamingEstimator();
    const t0 = performance.now();
    for (const p of packets) s.push(p);
    const t1 = performance.now();
    s.finish();
    pushMs = Math.min(pushMs, t1 - t0);
    finishMs = Math.min(finishMs, performance.now() - t1);
  }
  // The same cost measured robustly: every push and every plain mean timed on its own, the minimum
  // over 15 runs per packet, summed. Other work on the machine inflates whole-run times by tens of
  // per cent; it rarely lands on the same packet in every run, so these sums move by a few per cent.
  const pushMin = new Float64Array(packets.length).fill(Infinity);
  const refMin = new Float64Array(frames.length).fill(Infinity);
  for (let i = 0; i < 15; i++) {
    for (let k = 0; k < frames.length; k++) {
      const t0 = performance.now();
      if (meanRgb(frames[k].pixels).g < 0) throw new Error('unreachable');
      refMin[k] = Math.min(refMin[k], performance.now() - t0);
    }
    const s = new StreamingEstimator();
    for (let k = 0; k < packets.length; k++) {
      const t0 = performance.now();
      s.push(packets[k]);
      pushMin[k] = Math.min(pushMin[k], performance.now() - t0);
    }
  }
  const retainedKb = retainedKbPerEstimator(packets);
  const sum = (a: Float64Array): number => a.reduce((x, y) => x + y, 0);
  return {
    refMs,
    offlineMs,
    finishMs,
    perFrameUs: (pushMs * 1000) / frames.length,
    refPerFrameUs: (refMs * 1000) / frames.length,
    pushMinUs: (sum(pushMin) * 1000) / frames.length,
    refMinUs: (sum(refMin) * 1000) / frames.length,
    retainedKb,
    crops: frames.length,
  };
}

export async function run(): Promise<SectionOutput> {
  const runs: Figures[] = [];
  for (let i = 0; i < PROCESSES; i++) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions', 'source', SELF, '--child'], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (r.status !== 0) throw new Error(`engine bench child failed: ${r.stderr}`);
    runs.push(JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Figures);
  }
  // The process whose push figure is the median stands for all; the others are listed.
  const order = runs.map((_, i) => i).sort((a, b) => runs[a].perFrameUs - runs[b].perFrameUs);
  const { refMs, offlineMs, finishMs, perFrameUs, refPerFrameUs, pushMinUs, refMinUs, retainedKb, crops } =
    runs[order[(PROCESSES - 1) >> 1]];
  const cmd = '`npm run bench -- engine`';
  const headline: HeadlineRow[] = [
    {
      area: 'Engine',
      figure: 'streaming `push`, average per frame (live analysis included)',
      value: `${perFrameUs.toFixed(2)} µs`,
      target: '< 20 µs',
      met: perFrameUs < 20,
      reference: `${(perFrameUs / refPerFrameUs).toFixed(1)}× a plain 3-channel mean of the crop (${refPerFrameUs.toFixed(2)} µs)`,
      command: cmd,
    },
    {
      area: 'Engine',
      figure: 'offline estimator, 60 s capture at 30 fps',
      value: `${offlineMs.toFixed(1)} ms`,
      target: '< 50 ms',
      met: offlineMs < 50,
      reference: `${(offlineMs / refMs).toFixed(1)}× the plain mean of all crops (${refMs.toFixed(1)} ms)`,
      command: cmd,
    },
  ];
  const markdown = [
    '## Engine',
    '',
    `Measured by \`scripts/bench/engine.ts\` on a 60 s, 30 fps phantom capture (${crops} crops), best of repeated runs, one core, Node ${process.version}, in ${PROCESSES} fresh processes: the table is the process with the median push figure (push per frame in the ${PROCESSES}: ${runs.map((r) => `${r.perFrameUs.toFixed(2)} µs (${(r.perFrameUs / r.refPerFrameUs).toFixed(1)}×)`).join(', ')}). Reference: a plain 3-channel mean of the same crops in the same process.`,
    '',
    '| measure | time | ratio to reference | target |',
    '| --- | --- | --- | --- |',
    `| reference: plain mean of all crops | ${refMs.toFixed(1)} ms (${refPerFrameUs.toFixed(2)} µs/frame) | 1.0 | – |`,
    `| offline estimator, whole capture | ${offlineMs.toFixed(1)} ms | ${(offlineMs / refMs).toFixed(1)} | < 50 ms |`,
    `| streaming \`push\`, average per frame (live analysis included) | ${perFrameUs.toFixed(2)} µs | ${(perFrameUs / refPerFrameUs).toFixed(1)} | < 20 µs |`,
    `| streaming \`push\`, sum of per-packet minima over 15 runs, per frame (plain mean likewise: ${refMinUs.toFixed(2)} µs) | ${pushMinUs.toFixed(2)} µs | ${(pushMinUs / refMinUs).toFixed(1)} | – |`,
    `| streaming \`finish()\` (offline chain over the held trace) | ${finishMs.toFixed(1)} ms | ${(finishMs / refMs).toFixed(1)} | – |`,
    '',
    `Memory a streaming estimator holds after the 60 s capture (V8 heap + external after GC, 40 estimators alive, divided by 40): ${retainedKb.toFixed(0)} KB, of which the per-frame trace (every sample, for \`finish()\`) is ~174 KB and the live rate's kept windows ~41 KB (docs/engine.md, Streaming estimator).`,
  ].join('\n');
  return { markdown, headline };
}

if (process.argv.includes('--child')) console.log(JSON.stringify(measure()));
