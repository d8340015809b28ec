// The evaluation's H.264 captures are reproducible (common.ts FF_REPRODUCIBLE, X264_REPRODUCIBLE):
// the same phantom through the same codec settings gives the same crops, run after run, so
// docs/accuracy.md's codec figures do not change with the run or the machine. Before, x264's frame
// threads under rate control made different bytes from one run to the next.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { generatePhantom } from '../../packages/engine/src/index.js';
import type { Packet } from '../../packages/protocol/src/index.js';
import { codecRoundTrip } from './phantom-codec.js';

const digest = (ps: Packet[]): string => {
  const h = createHash('sha256');
  for (const p of ps) if (p.type === 1) h.update(p.pixels);
  return h.digest('hex');
};

describe('phantom through H.264', () => {
  it('gives the same crops on every run', async () => {
    // 6 s at 2 Mbit/s with sensor noise 6: without the settings, three runs gave three digests here.
    const { packets } = generatePhantom({ durationSec: 6, heartRateBpm: 70, seed: 3, noiseStd: 6 });
    const runs: Packet[][] = [];
    for (let i = 0; i < 3; i++) runs.push(await codecRoundTrip(packets, 30, 2000));
    expect(runs[0].length).toBeGreaterThan(100);
    expect(new Set(runs.map(digest)).size).toBe(1);
  }, 60_000);
});
