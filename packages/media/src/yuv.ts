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
 * bit (packages/media/test/yuv.test.ts compares whole clips), so packets did not change.
 */

/** The colour matrices the conversion knows, as libswscale's inverse tables (crv, cbu, cgu, cgv; 16.16). */
const MATRICES = {
  bt601: [104597, 132201, 25675, 53279],
  bt709: [117489, 138438, 13975, 34925],
} as const;

export type YuvMatrix = keyof typeof MATRICES;

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

/** `pmulhw`: the high 16 bits of a signed 16x16-bit product. */
const mulhi = (a: number, b: number): number => (a * b) >> 16;
/** libswscale's roundToInt16 of a 16.16 coefficient scaled by 2^13. */
const coeff = (c: number): number => Math.floor((c * 8192 + 32768) / 65536);

function tables(matrix: YuvMatrix): Tables {
  let t = cache.get(matrix);
  if (t) return t;
  const [crv, cbu, cgu, cgv] = MATRICES[matrix];
  // Limited range: luma scaled by 255/219 (16.16, integer division as libswscale does), offset 16.
  const yCoeff = coeff(Math.floor((65536 * 255) / 219));
  const [vr, ub, ug, vg] = [coeff(crv), coeff(cbu), coeff(-cgu), coeff(-cgv)];
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
 * whole 2x2 chroma blocks, into interleaved RGB `out` (a whole frame's size; other pixels are left
 * as they were).
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
  const bx0 = x0 & ~1;
  const by0 = y0 & ~1;
  const bx1 = Math.min(width, (x1 + 1) & ~1);
  const by1 = Math.min(height, (y1 + 1) & ~1);
  const cw = width >> 1;
  const uBase = width * height;
  const vBase = uBase + cw * (height >> 1);
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
}

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);
