/**
 * Bit-exact parity of two builds of the engine (issue 18: a faster streaming path must give the
 * same results): the same phantom captures (rates 15–60 fps, seeds, lengths, noise, motion, drops,
 * jitter, telemetry, illumination drift, pale and dark skin, no pulse, pure noise) pushed through
 * StreamingEstimator of each build; every event with the index of the packet that produced it, the
 * final measurement of `finish()` and `estimateOffline` are compared with every number as its
 * float64 bits. Exits 1 on any difference.
 *
 *   npx tsc -b && npx tsx scripts/testing/engine-parity.ts /work/main/packages/engine/dist packages/engine/dist
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';

type Engine = {
  StreamingEstimator: new () => { push(p: unknown): unknown[]; finish(): unknown };
  estimateOffline(packets: unknown[]): unknown;
  generatePhantom(o: Record<string, unknown>): { packets: unknown[] };
};

const load = async (dist: string): Promise<Engine> =>
  (await import(pathToFileURL(path.resolve(dist, 'index.js')).href)) as Engine;

const bits = new Float64Array(1);
const word = new BigUint64Array(bits.buffer);
/** JSON with each number written as its float64 bits (so -0, NaN and the last bit count). */
const exact = (x: unknown): string =>
  JSON.stringify(x, (_k, v: unknown) => (typeof v === 'number' ? ((bits[0] = v), `f${word[0].toString(16)}`) : v));

function run(e: Engine, packets: unknown[]): string[] {
  const est = new e.StreamingEstimator();
  const out: string[] = [];
  packets.forEach((p, i) => {
    const events = est.push(p);
    if (events.length > 0) out.push(exact([i, events]));
  });
  out.push(exact(est.finish()), exact(e.estimateOffline(packets)));
  return out;
}

function cases(): Record<string, unknown>[] {
  const list: Record<string, unknown>[] = [];
  let seed = 1;
  for (const fps of [15, 24, 25, 30, 60])
    for (const [durationSec, extra] of [
      [45, {}],
      [70, { noiseStd: 4, motionPx: 1.5, jitterMs: 6, dropRate: 0.03, telemetry: true }],
      [35, { illuminationDrift: 0.2, heartRateBpm: 110 }],
    ] as const)
      list.push({ durationSec, fps, heartRateBpm: 50 + ((seed * 17) % 70), seed: seed++, ...extra });
  list.push({ durationSec: 40, fps: 30, pureNoise: true, seed: 99 });
  list.push({ durationSec: 30, fps: 30, pulseAmplitude: 0, seed: 98 });
  list.push({ durationSec: 8, fps: 30, seed: 97 });
  list.push({ durationSec: 40, fps: 30, colours: { skin: [250, 245, 240] }, seed: 96 });
  list.push({ durationSec: 40, fps: 25, colours: { skin: [90, 60, 45] }, noiseStd: 3, seed: 95 });
  return list;
}

const [distA, distB] = process.argv.slice(2);
if (!distA || !distB) throw new Error('usage: engine-parity.ts <engine dist A> <engine dist B>');
const [a, b] = await Promise.all([load(distA), load(distB)]);
let differ = 0;
let eventPackets = 0;
const all = cases();
for (const c of all) {
  const packets = a.generatePhantom(c).packets;
  const ra = run(a, packets);
  const rb = run(b, packets);
  const same = ra.length === rb.length && ra.every((x, i) => x === rb[i]);
  eventPackets += ra.length - 2;
  if (!same) differ++;
  console.log(
    same ? 'same' : 'DIFFERENT',
    JSON.stringify(c),
    `${packets.length} packets, ${ra.length - 2} with events`,
  );
}
console.log(
  differ
    ? `${differ} of ${all.length} captures differ`
    : `all ${all.length} captures identical: ${eventPackets} packets with events, finish() and estimateOffline`,
);
process.exit(differ ? 1 : 0);
