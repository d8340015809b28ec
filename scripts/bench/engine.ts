// Engine speed: offline estimator on a 60 s, 30 fps phantom capture and the streaming estimator's
// average cost per pushed frame, each also as a ratio to a plain 3-channel mean over the same
// crops measured in the same run (the machine is shared and noisy). Returns a markdown section.
import { estimateOffline, generatePhantom, meanRgb, StreamingEstimator } from '../../packages/engine/src/index.js';
import type { Packet } from '@vitals/protocol';

function best(fn: () => void, reps: number): number {
  let min = Infinity;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
}

export async function run(): Promise<string> {
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
  for (let i = 0; i < 7; i++) {
    const s = new StreamingEstimator();
    const t0 = performance.now();
    for (const p of packets) s.push(p);
    const t1 = performance.now();
    s.finish();
    pushMs = Math.min(pushMs, t1 - t0);
    finishMs = Math.min(finishMs, performance.now() - t1);
  }
  const perFrameUs = (pushMs * 1000) / frames.length;
  const refPerFrameUs = (refMs * 1000) / frames.length;
  return [
    '## Engine',
    '',
    `Measured by \`scripts/bench/engine.ts\` on a 60 s, 30 fps phantom capture (${frames.length} crops), best of repeated runs, one core, Node ${process.version}. Reference: a plain 3-channel mean of the same crops in the same run.`,
    '',
    '| measure | time | ratio to reference | target |',
    '| --- | --- | --- | --- |',
    `| reference: plain mean of all crops | ${refMs.toFixed(1)} ms (${refPerFrameUs.toFixed(2)} µs/frame) | 1.0 | – |`,
    `| offline estimator, whole capture | ${offlineMs.toFixed(1)} ms | ${(offlineMs / refMs).toFixed(1)} | < 50 ms |`,
    `| streaming \`push\`, average per frame (live analysis included) | ${perFrameUs.toFixed(2)} µs | ${(perFrameUs / refPerFrameUs).toFixed(1)} | < 20 µs |`,
    `| streaming \`finish()\` (offline chain over the held trace) | ${finishMs.toFixed(1)} ms | ${(finishMs / refMs).toFixed(1)} | – |`,
  ].join('\n');
}
