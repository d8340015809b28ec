/**
 * The phantom is the yardstick of many tests and of docs/accuracy.md: their thresholds were chosen
 * on its seeds, so a change to how it renders (a faster renderer, say) must not change a single
 * byte it makes. Digests of two short phantoms recorded from the renderer before it was made
 * faster (2026-11-29): a still face, and one with motion, drift, dropped and jittered frames and
 * telemetry (the moving face takes the region recomputation path). The bytes also depend on V8's
 * Math.log, sin and cos (its own fdlibm ports, the same on every platform): a Node whose V8
 * changed them would fail here first, and would move every seed-calibrated phantom test with it.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generatePhantom, type PhantomOptions } from '@vitals/engine';

function digest(opts: PhantomOptions): string {
  const h = createHash('sha256');
  for (const p of generatePhantom(opts).packets) {
    h.update(`${p.type}:${p.tMicros};`);
    if (p.type === 1) h.update(p.pixels);
  }
  return h.digest('hex').slice(0, 32);
}

describe('phantom output is pinned', () => {
  it('a still face, 5 s', () => {
    expect(digest({ durationSec: 5, seed: 5 })).toBe('bd8c38d2721502054ebbd426f95c4709');
  });

  it('a moving face with drift, drops, jitter and telemetry, 5 s', () => {
    const moving = { durationSec: 5, seed: 6, motionPx: 2, illuminationDrift: 0.1, dropRate: 0.05, jitterMs: 5 };
    expect(digest({ ...moving, telemetry: true })).toBe('530b3f00d6b95cd0a714631a4c100352');
  });
});
