// The crop sums' WebAssembly kernel (pixel-sums.wat) against the plain JavaScript loop it replaces:
// the same figures bit for bit on every input (weights and sums are integers), the committed bytes
// are what the text assembles to, and a trace does not depend on which of the two ran.
import { afterEach, describe, expect, it } from 'vitest';
import { assemble, MODULES } from '../../../scripts/wasm/assemble.js';
import { generatePhantom } from '../src/index.js';
import { CROP_PIXELS } from '../src/trace/face-prior.js';
import {
  createCropSums,
  cropSums,
  cropSumsAccelerated,
  cropSumsScalar,
  useCropSumsKernel,
  WEIGHT_ONE,
} from '../src/trace/pixel-sums.js';
import { PIXEL_SUMS_WASM } from '../src/trace/pixel-sums-wasm.js';
import { buildRgbTrace, type RgbTrace } from '../src/trace/rgb-trace.js';
import { skinWeightedRgb, skinWeightedRgbInto } from '../src/trace/skin-trace.js';
import { createSkinTraceState } from '../src/trace/skin-trace-state.js';
import { layout, PHASES } from '../src/trace/skin-layout.js';
import type { SkinSample } from '../src/trace/skin-trace-state.js';

function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 4294967296;
}

/** Skin weights as the trace keeps them: an integer up to WEIGHT_ONE on covered pixels, zero elsewhere. */
function weightsFrom(f: (i: number) => number): Uint16Array {
  const w = new Uint16Array(CROP_PIXELS);
  for (const i of layout().crop) w[i] = f(i);
  return w;
}

function both(pixels: Uint8Array, weights: Uint16Array): [Record<string, number>, Record<string, number>] {
  const a = { ...cropSums(pixels, weights, createCropSums()) };
  const b = { ...cropSumsScalar(pixels, weights, createCropSums()) };
  return [a, b];
}

afterEach(() => useCropSumsKernel(true));

describe('crop sums kernel', () => {
  it('is the assembled pixel-sums.wat and loads here (Node has WebAssembly SIMD)', async () => {
    const m = MODULES.find((x) => x.name === 'PIXEL_SUMS_WASM')!;
    expect(Array.from(await assemble(m.wat))).toEqual(Array.from(PIXEL_SUMS_WASM));
    expect(cropSumsAccelerated()).toBe(true);
  });

  it('equals the scalar sums on random crops and weights', () => {
    const r = rng(7);
    for (let t = 0; t < 200; t++) {
      const pixels = Uint8Array.from({ length: 3 * CROP_PIXELS }, () => Math.floor(r() * 256));
      const weights = weightsFrom(() => (r() < 0.2 ? 0 : Math.floor(r() * (WEIGHT_ONE + 1))));
      const [a, b] = both(pixels, weights);
      expect(a).toEqual(b);
    }
  });

  it('does not overflow at the extremes: every byte 255, every weight WEIGHT_ONE', () => {
    const pixels = new Uint8Array(3 * CROP_PIXELS).fill(255);
    const [a, b] = both(
      pixels,
      weightsFrom(() => WEIGHT_ONE),
    );
    expect(a).toEqual(b);
    const n = layout().n;
    expect(a.skinW).toBe(n * WEIGHT_ONE);
    expect(a.skinR).toBe(n * WEIGHT_ONE * 255);
    expect(a.faceClipped).toBeGreaterThan(0);
  });

  it('counts clipped face pixels as the scalar loop does, and none when no byte reaches the level', () => {
    const r = rng(11);
    const pixels = Uint8Array.from({ length: 3 * CROP_PIXELS }, () => 100 + Math.floor(r() * 100));
    const weights = weightsFrom(() => 1000);
    expect(both(pixels, weights)[0].faceClipped).toBe(0);
    for (let k = 0; k < 40; k++) pixels[3 * (400 + 7 * k) + (k % 3)] = 250 + (k % 6);
    const [a, b] = both(pixels, weights);
    expect(a.faceClipped).toBeGreaterThan(0);
    expect(a).toEqual(b);
  });

  it('gives a uniform crop its own colour as skin, background and exposure figures, either way', () => {
    const pixels = new Uint8Array(3 * CROP_PIXELS);
    for (let i = 0; i < CROP_PIXELS; i++) pixels.set([180, 120, 90], 3 * i);
    for (const on of [true, false]) {
      useCropSumsKernel(on);
      const s = skinWeightedRgb(pixels, createSkinTraceState());
      expect([s.r, s.g, s.b, s.bgR, s.bgG, s.bgB]).toEqual([180, 120, 90, 180, 120, 90]);
      expect(s.luma).toBeCloseTo(0.299 * 180 + 0.587 * 120 + 0.114 * 90, 9);
      expect(s.clipped).toBe(0);
      expect(s.skinFraction).toBeGreaterThan(0.5);
    }
  });

  it('refreshes the skin colour model as the plain loop does: clipped, dark, bright, off-colour and odd-length phases', () => {
    // Each covered pixel holds one kind for 12 frames (three refreshes, so the smoothed image
    // settles on it), then the kinds move on: skin at the reference's brightness (the luma gate's
    // plateau), dimmer and brighter (its ramps), far too dim, clipped, off-colour (no skin weight),
    // plus sensor noise; the kernel (two slots a step) and the plain loop run side by side.
    const L = layout();
    expect(L.groupStart.some((q, p) => p < PHASES && (L.groupStart[p + 1] - q) % 2 === 1)).toBe(true);
    const kinds: [number, number, number][] = [
      [180, 120, 90],
      [90, 60, 45],
      [300, 200, 150],
      [36, 24, 18],
      [255, 200, 150],
      [60, 90, 200],
      [200, 130, 100],
    ];
    const r = rng(3);
    const fast = createSkinTraceState();
    const plain = createSkinTraceState();
    const a: SkinSample = { r: 0, g: 0, b: 0, skinFraction: 0, bgR: 0, bgG: 0, bgB: 0, luma: 0, clipped: 0 };
    const b = { ...a };
    const pixels = new Uint8Array(3 * CROP_PIXELS);
    const seen = new Set<string>();
    for (let f = 0; f < 240; f++) {
      const epoch = Math.floor(f / 12);
      for (let i = 0; i < CROP_PIXELS; i++) {
        const kind = kinds[(i * 7 + epoch * (1 + (i % 3))) % kinds.length];
        for (let c = 0; c < 3; c++)
          pixels[3 * i + c] = Math.max(0, Math.min(255, Math.round(kind[c] + 6 * (r() - 0.5))));
      }
      useCropSumsKernel(true);
      skinWeightedRgbInto(pixels, fast, a);
      useCropSumsKernel(false);
      skinWeightedRgbInto(pixels, plain, b);
      for (const k of Object.keys(a) as (keyof SkinSample)[]) expect(Object.is(a[k], b[k])).toBe(true);
      expect([fast.refR, fast.refG, fast.refLuma]).toEqual([plain.refR, plain.refG, plain.refLuma]);
      expect(Buffer.from(fast.weights.buffer).equals(Buffer.from(plain.weights.buffer))).toBe(true);
      let differ = 0;
      for (let q = 0; q < L.n; q++) {
        const m = L.slotImage[q];
        const d = L.slotStride[q];
        for (const o of [m, m + d, m + 2 * d]) if (!Object.is(fast.image[o], plain.image[o])) differ++;
      }
      expect(differ).toBe(0);
      for (let k = 0; k < L.n; k++) {
        const w = fast.weights[L.crop[k]];
        seen.add(w === 0 ? 'zero' : w >= Math.round(WEIGHT_ONE * L.prior[k]) ? 'full' : 'partial');
      }
    }
    expect([...seen].sort()).toEqual(['full', 'partial', 'zero']);
  });

  it('gives a trace that does not depend on which ran', () => {
    const { packets } = generatePhantom({ durationSec: 10, heartRateBpm: 75 });
    const fast = buildRgbTrace(packets);
    useCropSumsKernel(false);
    expect(cropSumsAccelerated()).toBe(false);
    const plain = buildRgbTrace(packets);
    const arrays = (t: RgbTrace): ArrayLike<number>[] => [
      t.r,
      t.g,
      t.b,
      t.skinFraction,
      t.bg!.r,
      t.bg!.g,
      t.bg!.b,
      t.exposure!.luma,
      t.exposure!.clipped,
    ];
    expect(fast.n).toBe(plain.n);
    const fa = arrays(fast);
    const pa = arrays(plain);
    for (let k = 0; k < fa.length; k++) {
      for (let i = 0; i < fast.n; i++) expect(Object.is(fa[k][i], pa[k][i])).toBe(true);
    }
  });
});
