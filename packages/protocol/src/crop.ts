/**
 * The spec's crop rule (Streaming protocol, type 1): face bounding box smoothed by a Kalman
 * filter, no padding (`padRatio` 0), resized to 36x36 RGB uint8, alpha dropped. Isomorphic so the
 * video pipeline (packages/media) and the browser SDK crop the same way. Typed arrays only.
 */
import { CROP_SIZE } from './packets.js';

/** An axis-aligned box in source pixels: top-left corner and size. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface BoxKalmanOptions {
  /** Measurement noise, standard deviation as a fraction of the box width. Default 0.03. */
  measurementNoise?: number;
  /**
   * Process noise: standard deviation of the acceleration of each coordinate, in box widths per
   * second squared (white-noise acceleration model). Default 0.1 (tuned end to end on UBFC-rPPG:
   * steadier crops gave better heart rates than 0.3; docs/media.md).
   */
  processNoise?: number;
  /** The same for the width and height (a face changes size slower than it moves). Default 0.03. */
  sizeProcessNoise?: number;
}

/** One coordinate under a constant-velocity model: state [position, velocity], covariance P. */
class Axis {
  x = 0;
  v = 0;
  p00 = 0;
  p01 = 0;
  p11 = 0;

  init(z: number, r2: number): void {
    this.x = z;
    this.v = 0;
    this.p00 = r2;
    this.p01 = 0;
    this.p11 = r2 * 100;
  }

  predict(dt: number, q: number): void {
    this.x += this.v * dt;
    // P = F P F' + Q, F = [[1, dt], [0, 1]], Q = q [[dt^3/3, dt^2/2], [dt^2/2, dt]]
    const p00 = this.p00 + 2 * dt * this.p01 + dt * dt * this.p11 + (q * dt * dt * dt) / 3;
    const p01 = this.p01 + dt * this.p11 + (q * dt * dt) / 2;
    const p11 = this.p11 + q * dt;
    this.p00 = p00;
    this.p01 = p01;
    this.p11 = p11;
  }

  update(z: number, r2: number): void {
    const s = this.p00 + r2;
    const k0 = this.p00 / s;
    const k1 = this.p01 / s;
    const y = z - this.x;
    this.x += k0 * y;
    this.v += k1 * y;
    const p00 = (1 - k0) * this.p00;
    const p01 = (1 - k0) * this.p01;
    const p11 = this.p11 - k1 * this.p01;
    this.p00 = p00;
    this.p01 = p01;
    this.p11 = p11;
  }
}

/**
 * Kalman smoother of a face box: centre x, centre y, width and height each follow a
 * constant-velocity model. Noise scales with the box width, so one tuning fits any resolution.
 *
 * @example
 * const k = new BoxKalman();
 * const smoothed = k.update({ x: 100, y: 80, width: 240, height: 240 }, 0.033);
 */
export class BoxKalman {
  private readonly axes = [new Axis(), new Axis(), new Axis(), new Axis()];
  private readonly rRel: number;
  private readonly qRel: number;
  private readonly qSizeRel: number;
  private lastT = 0;
  private ready = false;

  constructor(opts: BoxKalmanOptions = {}) {
    this.rRel = opts.measurementNoise ?? 0.03;
    this.qRel = opts.processNoise ?? 0.1;
    this.qSizeRel = opts.sizeProcessNoise ?? 0.03;
  }

  get initialized(): boolean {
    return this.ready;
  }

  /** Forget the track (call when the face is lost). */
  reset(): void {
    this.ready = false;
  }

  /** Feeds one measured box at time `tSec` and returns the smoothed box. */
  update(box: Box, tSec: number): Box {
    const z = [box.x + box.width / 2, box.y + box.height / 2, box.width, box.height];
    const scale = this.ready ? Math.max(1, this.axes[2].x) : Math.max(1, box.width);
    const r2 = (this.rRel * scale) ** 2;
    const q = (this.qRel * scale) ** 2;
    const qSize = (this.qSizeRel * scale) ** 2;
    if (!this.ready) {
      for (let i = 0; i < 4; i++) this.axes[i].init(z[i], r2);
      this.ready = true;
    } else {
      const dt = Math.min(1, Math.max(0, tSec - this.lastT));
      for (let i = 0; i < 4; i++) {
        this.axes[i].predict(dt, i < 2 ? q : qSize);
        this.axes[i].update(z[i], r2);
      }
    }
    this.lastT = tSec;
    return this.current() as Box;
  }

  /** The current smoothed box, or null before the first measurement. */
  current(): Box | null {
    if (!this.ready) return null;
    const [cx, cy, w, h] = this.axes.map((a) => a.x);
    const width = Math.max(1, w);
    const height = Math.max(1, h);
    return { x: cx - width / 2, y: cy - height / 2, width, height };
  }
}

/**
 * Crops `box` out of an interleaved RGB (`channels` 3) or RGBA (`channels` 4, alpha dropped) image
 * and resizes it to `outWidth` x `outHeight` RGB by area averaging (each output pixel is the mean
 * of the source pixels it covers; the box is not padded). Source pixels outside the image repeat
 * the nearest edge pixel.
 */
export function cropResizeRgb(
  src: Uint8Array | Uint8ClampedArray,
  srcWidth: number,
  srcHeight: number,
  box: Box,
  outWidth: number = CROP_SIZE,
  outHeight: number = CROP_SIZE,
  channels: 3 | 4 = 3,
  out: Uint8Array = new Uint8Array(outWidth * outHeight * 3),
): Uint8Array {
  if (src.length < srcWidth * srcHeight * channels) throw new RangeError('source smaller than its dimensions');
  if (out.length !== outWidth * outHeight * 3) throw new RangeError('output buffer has the wrong size');
  const xs = cropSpans(box.x, box.width, outWidth, srcWidth);
  const ys = cropSpans(box.y, box.height, outHeight, srcHeight);
  const rowStride = srcWidth * channels;
  let o = 0;
  for (let oy = 0; oy < outHeight; oy++) {
    const y0 = ys[2 * oy];
    const y1 = ys[2 * oy + 1];
    for (let ox = 0; ox < outWidth; ox++) {
      const x0 = xs[2 * ox];
      const x1 = xs[2 * ox + 1];
      let r = 0;
      let g = 0;
      let b = 0;
      for (let y = y0; y < y1; y++) {
        let i = clampInt(y, 0, srcHeight - 1) * rowStride;
        if (x0 >= 0 && x1 <= srcWidth) {
          i += x0 * channels;
          for (let x = x0; x < x1; x++, i += channels) {
            r += src[i];
            g += src[i + 1];
            b += src[i + 2];
          }
        } else {
          for (let x = x0; x < x1; x++) {
            const j = i + clampInt(x, 0, srcWidth - 1) * channels;
            r += src[j];
            g += src[j + 1];
            b += src[j + 2];
          }
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      out[o++] = Math.round(r / n);
      out[o++] = Math.round(g / n);
      out[o++] = Math.round(b / n);
    }
  }
  return out;
}

/**
 * Integer [start, end) source ranges, one per output pixel, each at least one pixel wide: the pixels
 * cropResizeRgb averages along one axis (frame coordinates; outside the frame it reads the edge).
 */
export function cropSpans(start: number, length: number, outSize: number, srcSize: number): Int32Array {
  const r = new Int32Array(outSize * 2);
  const step = length / outSize;
  for (let i = 0; i < outSize; i++) {
    let a = Math.floor(start + i * step);
    let b = Math.floor(start + (i + 1) * step);
    // Boxes far outside the frame collapse onto the edge pixel rather than spinning for nothing.
    a = clampInt(a, -srcSize, 2 * srcSize);
    b = clampInt(b, -srcSize, 2 * srcSize);
    if (b <= a) b = a + 1;
    r[2 * i] = a;
    r[2 * i + 1] = b;
  }
  return r;
}

function clampInt(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

/** Mean luma (BT.601) of an RGB buffer, in [0, 1]. */
export function meanLuma(rgb: Uint8Array): number {
  let s = 0;
  for (let i = 0; i + 2 < rgb.length; i += 3) s += 0.299 * rgb[i] + 0.587 * rgb[i + 1] + 0.114 * rgb[i + 2];
  const n = Math.floor(rgb.length / 3);
  return n === 0 ? 0 : s / n / 255;
}
