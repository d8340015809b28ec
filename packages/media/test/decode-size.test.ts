/**
 * Issue 18: frames are decoded at half the source's size (ffmpeg scales while converting to RGB),
 * never below 240 px on the shorter side, never above 1280 px on the longer one, and whole when
 * aux crops are ordered (their 448x448 JPEGs need the source's detail).
 */
import { describe, expect, it } from 'vitest';
import { decodeSize } from '../src/video.js';

describe('decodeSize', () => {
  it('halves a VGA video and reports source pixels per decoded pixel', () => {
    expect(decodeSize({ width: 640, height: 480 }, 0.5)).toEqual({
      width: 320,
      height: 240,
      scale: true,
      scaleBack: 2,
    });
  });
  it('keeps at least 240 px on the shorter side', () => {
    expect(decodeSize({ width: 320, height: 240 }, 0.5)).toMatchObject({ width: 320, height: 240, scale: false });
    expect(decodeSize({ width: 480, height: 360 }, 0.5)).toMatchObject({ width: 320, height: 240, scale: true });
    expect(decodeSize({ width: 360, height: 640 }, 0.5)).toMatchObject({ width: 240, height: 426, scale: true });
  });
  it('halves HD and caps the longer side at 1280 px', () => {
    expect(decodeSize({ width: 1920, height: 1080 }, 0.5)).toMatchObject({ width: 960, height: 540 });
    expect(decodeSize({ width: 4096, height: 3072 }, 0.5)).toMatchObject({ width: 1280, height: 960, scaleBack: 3.2 });
    expect(decodeSize({ width: 4096, height: 3072 }, 1)).toMatchObject({ width: 1280, height: 960 });
  });
  it('decodes whole at scale 1 (aux ordered)', () => {
    expect(decodeSize({ width: 640, height: 480 }, 1)).toMatchObject({ width: 640, height: 480, scale: false });
  });
});
