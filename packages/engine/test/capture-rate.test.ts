import { describe, expect, it } from 'vitest';
import { captureHeartRate } from '../src/rate/capture-rate.js';
import { trackHeartRate } from '../src/rate/track-heart-rate.js';
import { REST_BAND } from '../src/pulse/pulse-signals.js';
import { cropTexture } from '../src/trace/texture.js';
import { estimateOffline, generatePhantom } from '@vitals/engine';

const FS = 30;

/** Deterministic Gaussian noise (LCG + Box-Muller). */
function noise(n: number, seed: number): Float64Array {
  let s = seed;
  const u = (): number => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
  return Float64Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(u() + 1e-12)) * Math.cos(2 * Math.PI * u()));
}

/** A tone whose frequency follows hz(t) (phase-continuous). */
function chirp(n: number, hz: (tSec: number) => number, amp: number): Float64Array {
  const x = new Float64Array(n);
  let ph = 0;
  for (let i = 0; i < n; i++) {
    ph += (2 * Math.PI * hz(i / FS)) / FS;
    x[i] = amp * Math.sin(ph);
  }
  return x;
}

describe('capture heart rate (anchored on the reference-weighted averaged spectrum)', () => {
  it('ignores an artifact the pulse-less reference also carries, where a free track follows it', () => {
    const n = 60 * FS;
    const pulse = chirp(n, () => 1.8, 1); // 108 bpm, steady
    // Codec-like pumping near 1 Hz, strong in the middle 30 s where the pulse is buried.
    const artifact = chirp(n, () => 1.0, 1).map((v, i) => v * (i > 15 * FS && i < 45 * FS ? 4 : 0.6));
    const w = noise(n, 7);
    const skin = pulse.map((v, i) => v + artifact[i] + 1.2 * w[i]);
    const w2 = noise(n, 11);
    const reference = artifact.map((v, i) => v + 0.3 * w2[i]);
    const free = trackHeartRate([skin], FS, { band: REST_BAND, noise: reference });
    const anchored = captureHeartRate(skin, FS, { band: REST_BAND, references: [reference] });
    expect(Math.abs(anchored.hrBpm - 108)).toBeLessThan(2);
    expect(Math.abs(anchored.anchorBpm - 108)).toBeLessThan(2);
    // The whole-band track follows the artifact through the middle stretch.
    expect(free.meanHrBpm).toBeLessThan(100);
  });

  it('reports the mean of a drifting rate, not the mode of the spectrum', () => {
    const n = 60 * FS;
    // 90 bpm for 40 s, then a ramp to 114 bpm: the mean rate is ~94.4, the spectral mode 90.
    const hz = (t: number): number => (t < 40 ? 1.5 : 1.5 + (0.4 * (t - 40)) / 20);
    const w = noise(n, 3);
    const x = chirp(n, hz, 1).map((v, i) => v + 0.5 * w[i]);
    let meanBpm = 0;
    for (let i = 0; i < n; i++) meanBpm += (hz(i / FS) * 60) / n;
    const r = captureHeartRate(x, FS, { band: REST_BAND });
    expect(Math.abs(r.anchorBpm - 90)).toBeLessThan(2);
    expect(Math.abs(r.hrBpm - meanBpm)).toBeLessThan(2);
  });

  it('gives NaN (no rate) for a capture shorter than 4 s', () => {
    expect(captureHeartRate(new Float64Array(3 * FS), FS).hrBpm).toBeNaN();
  });

  it('reuses a track of the same pulse and reference without changing the answer', () => {
    const n = 45 * FS;
    const w = noise(n, 5);
    const x = chirp(n, () => 1.2, 1).map((v, i) => v + w[i]);
    const ref = noise(n, 9);
    const track = trackHeartRate([x], FS, { band: REST_BAND, noise: ref });
    const a = captureHeartRate(x, FS, { band: REST_BAND, references: [ref] });
    const b = captureHeartRate(x, FS, { band: REST_BAND, references: [ref], track });
    expect(b.hrBpm).toBeCloseTo(a.hrBpm, 9);
  });
});

describe('capture heart rate on short clean captures', () => {
  // A texture reference taken over the face carried the pulse (face edges) and its spectral
  // down-weighting pushed 20–25 s captures onto the harmonic (66 → 133 bpm); the reference is now
  // the background corners' texture, which has no pulse.
  it.each([
    [20, 66],
    [25, 66],
    [20, 52],
    [22, 118],
  ])('%i s at %i bpm is measured at its rate, not its harmonic', (durationSec, heartRateBpm) => {
    const { packets, truth } = generatePhantom({ heartRateBpm, durationSec, fps: 30, seed: 3 });
    const m = estimateOffline(packets);
    expect(Math.abs(m.stats.internalHeartRateBpm! - truth.heartRateBpm)).toBeLessThanOrEqual(3);
  });
});

describe('crop texture energy (codec reference)', () => {
  const crop = (f: (x: number, y: number) => number): Uint8Array => {
    const p = new Uint8Array(36 * 36 * 3);
    for (let y = 0; y < 36; y++) for (let x = 0; x < 36; x++) p.fill(f(x, y), (y * 36 + x) * 3, (y * 36 + x) * 3 + 3);
    return p;
  };
  it('is 1 for a flat crop and grows with neighbour contrast', () => {
    expect(cropTexture(crop(() => 120))).toBe(1);
    const soft = cropTexture(crop((x, y) => 120 + ((x + y) % 2) * 4));
    const sharp = cropTexture(crop((x, y) => 120 + ((x + y) % 2) * 16));
    expect(soft).toBeGreaterThan(1);
    expect(sharp - 1).toBeCloseTo(4 * (soft - 1), 9);
  });
  it('does not change when the whole crop brightens uniformly (a uniform colour change is not texture)', () => {
    const pattern = (x: number, y: number): number => 100 + ((x * 7 + y * 13) % 11);
    expect(cropTexture(crop((x, y) => pattern(x, y) + 3))).toBe(cropTexture(crop(pattern)));
  });
});
