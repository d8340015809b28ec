// cropTexture runs on every frame; its allocation-free form must not change a bit. The reference is
// the form it replaced (both corners from an array literal), written out here.
import { describe, expect, it } from 'vitest';
import { cropTexture } from '../src/trace/texture.js';

const SIDE = 36;
const C = SIDE / 6;

function plainTexture(pixels: Uint8Array): number {
  let s = 0;
  for (const x0 of [0, SIDE - C]) {
    for (let y = 0; y < C; y++) {
      let j = (y * SIDE + x0) * 3 + 1;
      for (let x = 0; x < C; x++, j += 3) {
        if (x < C - 1) s += Math.abs(pixels[j] - pixels[j + 3]);
        if (y < C - 1) s += Math.abs(pixels[j] - pixels[j + SIDE * 3]);
      }
    }
  }
  return s / (2 * 2 * C * (C - 1)) + 1;
}

function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 4294967296;
}

describe('cropTexture', () => {
  it('equals the plain two-corner loop bit for bit on random and structured crops', () => {
    const next = rng(18);
    for (let trial = 0; trial < 500; trial++) {
      const px = new Uint8Array(SIDE * SIDE * 3);
      // Noise of varying amplitude over a varying level, and the corners alone differing.
      const level = Math.floor(next() * 256);
      const amp = Math.floor(next() * 256);
      for (let i = 0; i < px.length; i++) px[i] = Math.max(0, Math.min(255, level + Math.floor((next() - 0.5) * amp)));
      expect(Object.is(cropTexture(px), plainTexture(px))).toBe(true);
    }
    expect(cropTexture(new Uint8Array(SIDE * SIDE * 3).fill(7))).toBe(1);
  });
});
