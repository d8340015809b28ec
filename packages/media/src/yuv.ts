/**
 * YUV 4:2:0 (I420) to RGB in JS, for the frames the pipeline reads (issue 18): ffmpeg hands over
 * the decoder's own planes (no swscale pass, half the pipe bytes) and only the pixels that are
 * used become RGB: the whole frame for a face analysis (4 a second), the crop's box otherwise
 * (the tracker calls `prepareRegion` before each).
 *
 * The arithmetic is ffmpeg's unscaled yuv420p→rgb24 conversion (libswscale's x86 fast path, which
 * the bundled ffmpeg runs for `-pix_fmt rgb24`): samples promoted by 3 bits, 16-bit coefficients
 * rounded from the colour matrix, `pmulhw` (multiply, keep the high 16 bits), chroma shared by
 * each 2x2 block, the sum saturated to 0..255. It gives the bytes that ffmpeg gave before, bit for
 * bit (packages/media/test/yuv.test.ts compares whole clips), so packets did not change. The
 * tracked frames' face crops skip RGB altogether (yuv-crop.ts, the same bytes).
 */
import { i420CropRgb } from './yuv-crop.js';
import { yuvCoefficients, type YuvMatrix } from './yuv-matrix.js';

export type { YuvMatrix } from './yuv-matrix.js';

/** A pixel format and colour tags that the JS conversion reproduces; null when ffmpeg must convert. */
export function yuvMatrixFor(
  stream: { pixFmt?: string; colorRange?: string; colorSpace?: string },
  width: number,
  height: number,
): YuvMatrix | null {
  if (stream.pixFmt !== 'yuv420p' || width % 2 !== 0 || height % 2 !== 0) return null;
  if (stream.colorRange === 'pc') return null;
  const cs = stream.colorSpace ?? 'unknown';
  if (cs === 'bt709') return 'bt709';
  // libswscale's default (untagged) and the BT.601 tags share one matrix.
  if (cs === 'unknown' || cs === 'bt470bg' || cs === 'smpte170m') return 'bt601';
  return null;
}

interface Tables {
  /** Luma term plus CLAMP_OFFSET. */
  y: Int32Array;
  rV: Int32Array;
  gU: Int32Array;
  gV: Int32Array;
  bU: Int32Array;
}

const CLAMP_OFFSET = 512;
/** v + CLAMP_OFFSET → v clamped to 0..255 (sums stay within -300..600). */
const CLAMP = new Uint8Array(1536).map((_, i) => Math.min(255, Math.max(0, i - CLAMP_OFFSET)));
const cache = new Map<YuvMatrix, Tables>();
/** 32-bit words hold bytes low first (every platform Node runs on; checked, not assumed). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** `pmulhw`: the high 16 bits of a signed 16x16-bit product. */
const mulhi = (a: number, b: number): number => (a * b) >> 16;
function tables(matrix: YuvMatrix): Tables {
  let t = cache.get(matrix);
  if (t) return t;
  const { yCoeff, vr, ub, ug, vg } = yuvCoefficients(matrix);
  const table = (): Int32Array => new Int32Array(256);
  t = { y: table(), rV: table(), gU: table(), gV: table(), bU: table() };
  for (let i = 0; i < 256; i++) {
    const c = i * 8 - 1024;
    t.y[i] = mulhi(i * 8 - 128, yCoeff) + CLAMP_OFFSET;
    t.rV[i] = mulhi(c, vr);
    t.gU[i] = mulhi(c, ug);
    t.gV[i] = mulhi(c, vg);
    t.bU[i] = mulhi(c, ub);
  }
  cache.set(matrix, t);
  return t;
}

/** Bytes of one I420 frame (even width and height). */
export const i420Bytes = (width: number, height: number): number => width * height + 2 * (width / 2) * (height / 2);

/**
 * Converts the rectangle [x0, x1) x [y0, y1) of an I420 frame (even width and height), widened to
 * whole 2x2 chroma blocks (4x2 where the width is a multiple of 4), into interleaved RGB `out` (a
 * whole frame's size; other pixels are left as they were).
 */
export function i420ToRgbRegion(
  yuv: Uint8Array,
  width: number,
  height: number,
  matrix: YuvMatrix,
  out: Uint8Array,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
): void {
  const { y: ty, rV, gU, gV, bU } = tables(matrix);
  const cl = CLAMP;
  const cw = width >> 1;
  const uBase = width * height;
  const vBase = uBase + cw * (height >> 1);
  const by0 = y0 & ~1;
  const by1 = Math.min(height, (y1 + 1) & ~1);
  if (LITTLE_ENDIAN && width % 4 === 0 && out.byteOffset % 4 === 0) {
    // Four pixels (two chroma samples) a step on each of two rows, written as three 32-bit words
    // per row (little-endian: R0 G0 B0 R1 | G1 B1 R2 G2 | B2 R3 G3 B3): a quarter of the stores.
    // The region widens to whole 4x2 blocks, whose extra pixels get their own values.
    const bx0 = x0 & ~3;
    const bx1 = Math.min(width, (x1 + 3) & ~3);
    const o32 = new Uint32Array(out.buffer, out.byteOffset, out.byteLength >> 2);
    const stride4 = (width * 3) >> 2;
    for (let y = by0; y < by1; y += 2) {
      let ci = (y >> 1) * cw + (bx0 >> 1);
      let yi = y * width + bx0;
      let o = (yi * 3) >> 2;
      for (let x = bx0; x < bx1; x += 4, ci += 2, yi += 4, o += 3) {
        const u0 = yuv[uBase + ci];
        const v0 = yuv[vBase + ci];
        const u1 = yuv[uBase + ci + 1];
        const v1 = yuv[vBase + ci + 1];
        const r0 = rV[v0];
        const g0 = gU[u0] + gV[v0];
        const b0 = bU[u0];
        const r1 = rV[v1];
        const g1 = gU[u1] + gV[v1];
        const b1 = bU[u1];
        let a = ty[yuv[yi]];
        let b = ty[yuv[yi + 1]];
        let c = ty[yuv[yi + 2]];
        let d = ty[yuv[yi + 3]];
        o32[o] = cl[a + r0] | (cl[a + g0] << 8) | (cl[a + b0] << 16) | (cl[b + r0] << 24);
        o32[o + 1] = cl[b + g0] | (cl[b + b0] << 8) | (cl[c + r1] << 16) | (cl[c + g1] << 24);
        o32[o + 2] = cl[c + b1] | (cl[d + r1] << 8) | (cl[d + g1] << 16) | (cl[d + b1] << 24);
        const y2 = yi + width;
        a = ty[yuv[y2]];
        b = ty[yuv[y2 + 1]];
        c = ty[yuv[y2 + 2]];
        d = ty[yuv[y2 + 3]];
        const p = o + stride4;
        o32[p] = cl[a + r0] | (cl[a + g0] << 8) | (cl[a + b0] << 16) | (cl[b + r0] << 24);
        o32[p + 1] = cl[b + g0] | (cl[b + b0] << 8) | (cl[c + r1] << 16) | (cl[c + g1] << 24);
        o32[p + 2] = cl[c + b1] | (cl[d + r1] << 8) | (cl[d + g1] << 16) | (cl[d + b1] << 24);
      }
    }
    return;
  }
  const bx0 = x0 & ~1;
  const bx1 = Math.min(width, (x1 + 1) & ~1);
  const stride = width * 3;
  // One chroma sample at a time, for the four pixels that share it.
  for (let y = by0; y < by1; y += 2) {
    let ci = (y >> 1) * cw + (bx0 >> 1);
    let yi = y * width + bx0;
    let o = yi * 3;
    for (let x = bx0; x < bx1; x += 2, ci++, yi += 2, o += 6) {
      const u = yuv[uBase + ci];
      const v = yuv[vBase + ci];
      const r = rV[v];
      const g = gU[u] + gV[v];
      const b = bU[u];
      let l = ty[yuv[yi]];
      out[o] = cl[l + r];
      out[o + 1] = cl[l + g];
      out[o + 2] = cl[l + b];
      l = ty[yuv[yi + 1]];
      out[o + 3] = cl[l + r];
      out[o + 4] = cl[l + g];
      out[o + 5] = cl[l + b];
      const o2 = o + stride;
      const y2 = yi + width;
      l = ty[yuv[y2]];
      out[o2] = cl[l + r];
      out[o2 + 1] = cl[l + g];
      out[o2 + 2] = cl[l + b];
      l = ty[yuv[y2 + 1]];
      out[o2 + 3] = cl[l + r];
      out[o2 + 4] = cl[l + g];
      out[o2 + 5] = cl[l + b];
    }
  }
}

/**
 * Largest squared change of each term a sample difference can cause, indexed by the difference
 * + 255 (differences -255..255), per matrix: luma; blue and green from U (B² + 2G²); red and green
 * from V (R² + 2G²). Computed over every pair of sample values, so exact maxima.
 */
interface BoundTables {
  luma: Int32Array;
  u: Int32Array;
  v: Int32Array;
}
const boundCache = new Map<YuvMatrix, BoundTables>();

function boundTables(matrix: YuvMatrix): BoundTables {
  let t = boundCache.get(matrix);
  if (t) return t;
  const { y: ty, rV, gU, gV, bU } = tables(matrix);
  const max = (f: (p: number, q: number) => number): Int32Array => {
    const out = new Int32Array(511);
    for (let p = 0; p < 256; p++) {
      for (let q = 0; q < 256; q++) {
        const v = f(p, q);
        if (v > out[p - q + 255]) out[p - q + 255] = v;
      }
    }
    return out;
  };
  t = {
    luma: max((p, q) => (ty[p] - ty[q]) ** 2),
    u: max((p, q) => (bU[p] - bU[q]) ** 2 + 2 * (gU[p] - gU[q]) ** 2),
    v: max((p, q) => (rV[p] - rV[q]) ** 2 + 2 * (gV[p] - gV[q]) ** 2),
  };
  boundCache.set(matrix, t);
  return t;
}

/**
 * Σ table[a[aOff + i] - b[bOff + i] + 255] over n bytes, exactly (tables of non-negative integers below
 * 2^19); four bytes a load where both sides are aligned. Also the frame-change check's exact sum of
 * squared differences (human-skip.ts `squaredDifference`, a table of squares).
 */
export function sumOfTable(
  a: Uint8Array,
  aOff: number,
  b: Uint8Array,
  bOff: number,
  n: number,
  table: Int32Array,
): number {
  let sum = 0;
  let i = 0;
  // Integer sums are exact in doubles far beyond any frame's (terms below 2^19); summing in blocks
  // keeps a block's sum a small integer for frames that barely changed, the common case.
  if ((a.byteOffset + aOff) % 4 === 0 && (b.byteOffset + bOff) % 4 === 0) {
    const words = n >> 2;
    const x = new Uint32Array(a.buffer, a.byteOffset + aOff, words);
    const y = new Uint32Array(b.buffer, b.byteOffset + bOff, words);
    for (let w = 0; w < words;) {
      const end = Math.min(words, w + 2048);
      let block = 0;
      for (; w < end; w++) {
        const p = x[w];
        const q = y[w];
        block +=
          table[(p & 255) - (q & 255) + 255] +
          table[((p >>> 8) & 255) - ((q >>> 8) & 255) + 255] +
          table[((p >>> 16) & 255) - ((q >>> 16) & 255) + 255] +
          table[(p >>> 24) - (q >>> 24) + 255];
      }
      sum += block;
    }
    i = words * 4;
  }
  while (i < n) {
    const end = Math.min(n, i + 8192);
    let block = 0;
    for (; i < end; i++) block += table[a[aOff + i] - b[bOff + i] + 255];
    sum += block;
  }
  return sum;
}

/**
 * An upper bound, exact in integers, of the sum of squared differences between the RGB of two I420
 * frames of the same size and matrix (what `squaredDifference` of their converted bytes would
 * give), read from the planes without converting them. Each channel is clamp(luma term + chroma
 * terms), and clamping never widens a difference, so |ΔR| ≤ |Δluma| + |ΔrV|, |ΔG| ≤ |Δluma| +
 * |ΔgU| + |ΔgV|, |ΔB| ≤ |Δluma| + |ΔbU|; with (a + b)² ≤ 2a² + 2b² (twice for G) that sums to
 * 6·Σ Δluma² over pixels plus 8·Σ (ΔbU² + 2ΔgU²) + 8·Σ (ΔrV² + 2ΔgV²) over the chroma samples
 * (each shared by 4 pixels), each term at most its table's maximum for the samples' difference.
 * About half the bytes of the converted frames and no conversion: the frame-change check decides
 * from it whenever it is clearly under the threshold.
 */
export function i420DiffBound(a: Uint8Array, b: Uint8Array, width: number, height: number, matrix: YuvMatrix): number {
  const t = boundTables(matrix);
  const lumaN = width * height;
  const chromaN = (width >> 1) * (height >> 1);
  const luma = sumOfTable(a, 0, b, 0, lumaN, t.luma);
  const u = sumOfTable(a, lumaN, b, lumaN, chromaN, t.u);
  const v = sumOfTable(a, lumaN + chromaN, b, lumaN + chromaN, chromaN, t.v);
  return 6 * luma + 8 * (u + v);
}

/** A decoded I420 frame whose RGB (`data`, a whole frame's size) is made where it is read. */
export class I420Frame {
  constructor(
    readonly index: number,
    readonly tSec: number,
    /** The decoder's planes: Y, then U and V at half size each way. */
    readonly yuv: Uint8Array,
    /** RGB, valid only where `prepareRegion` converted it. */
    readonly data: Uint8Array,
    readonly width: number,
    readonly height: number,
    readonly matrix: YuvMatrix,
  ) {}

  private whole = false;

  /**
   * Makes RGB of the pixels a crop of `box` reads (cropResizeRgb: the box's pixels, edge pixels for
   * the parts outside the frame), with a margin of two pixels; the whole frame for null.
   */
  prepareRegion(box: { x: number; y: number; width: number; height: number } | null): void {
    const { width: w, height: h } = this;
    if (this.whole) return;
    if (!box || ![box.x, box.y, box.width, box.height].every(Number.isFinite)) {
      i420ToRgbRegion(this.yuv, w, h, this.matrix, this.data, 0, 0, w, h);
      this.whole = true;
      return;
    }
    const x0 = clamp(Math.floor(box.x) - 2, 0, w - 1);
    const y0 = clamp(Math.floor(box.y) - 2, 0, h - 1);
    const x1 = clamp(Math.ceil(box.x + box.width) + 2, x0 + 1, w);
    const y1 = clamp(Math.ceil(box.y + box.height) + 2, y0 + 1, h);
    i420ToRgbRegion(this.yuv, w, h, this.matrix, this.data, x0, y0, x1, y1);
  }

  /** The face crop of `box` from the planes (yuv-crop.ts), without making RGB; null where the kernel cannot. */
  cropRgb(box: { x: number; y: number; width: number; height: number }): Uint8Array | null {
    return i420CropRgb(this.yuv, this.width, this.height, this.matrix, box);
  }
}

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);
