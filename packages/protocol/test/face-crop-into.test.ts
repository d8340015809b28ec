/**
 * Type-1 packets decoded into a reused packet (decodeFaceCropInto, the server's per-frame path):
 * the same content as decodePacket, over reused buffers, with the pixels copied out of the message.
 */
import { describe, expect, test } from 'vitest';
import {
  createFaceCropPacket,
  decodeFaceCropInto,
  decodePacket,
  encodeFaceCrop,
  encodeQuality,
  faceCropTMicros,
  isFaceCropPacket,
  isPacketError,
  type FaceCropPacket,
} from '../src/packets.js';

const pixels = (seed: number) => Uint8Array.from({ length: 3888 }, (_, i) => (i * 7 + seed) % 256);

/** A packet placed at an odd offset of a larger buffer, as a message inside a socket read. */
function inside(packet: Uint8Array, at: number): Uint8Array {
  const big = new Uint8Array(at + packet.length + 5).fill(0xee);
  big.set(packet, at);
  return big.subarray(at, at + packet.length);
}

const cases = [
  { seq: 0, tMicros: 0, flags: 0 },
  { seq: 7, tMicros: 33_333, flags: 1 },
  { seq: 0x01020304, tMicros: 4_000_000_000, flags: 0x8001 },
  { seq: 0xffffffff, tMicros: 0xffffffff, flags: 0xffff },
];

describe('decodeFaceCropInto', () => {
  test('one reused packet holds what decodePacket returns, frame after frame', () => {
    const out = createFaceCropPacket();
    const pixelBuffer = out.pixels;
    cases.forEach((c, k) => {
      const bytes = inside(encodeFaceCrop({ ...c, pixels: pixels(k) }), 3 + k);
      const expected = decodePacket(bytes) as FaceCropPacket;
      expect(isFaceCropPacket(bytes)).toBe(true);
      expect(decodeFaceCropInto(bytes, out)).toBe(true);
      expect(out.pixels).toBe(pixelBuffer); // decoded into, not replaced
      expect({ ...out, pixels: Array.from(out.pixels) }).toEqual({ ...expected, pixels: Array.from(expected.pixels) });
      expect(faceCropTMicros(bytes)).toBe(c.tMicros);
    });
  });

  test('the pixels are copied: the message buffer can be reused at once', () => {
    const out = createFaceCropPacket();
    const bytes = inside(encodeFaceCrop({ seq: 1, tMicros: 2, pixels: pixels(3) }), 1);
    decodeFaceCropInto(bytes, out);
    bytes.fill(0);
    expect(Array.from(out.pixels)).toEqual(Array.from(pixels(3)));
  });

  test('refuses what decodePacket refuses for type 1, leaving the packet unchanged', () => {
    const out = createFaceCropPacket();
    decodeFaceCropInto(encodeFaceCrop({ seq: 5, tMicros: 6, pixels: pixels(1) }), out);
    const before = { ...out, pixels: Array.from(out.pixels) };
    const good = encodeFaceCrop({ seq: 9, tMicros: 10, pixels: pixels(2) });
    const wrongVersion = good.slice();
    wrongVersion[1] = 2;
    const bad = [
      good.subarray(0, 3899),
      Uint8Array.from([...good, 0]),
      wrongVersion,
      encodeQuality({ tMicros: 1, faceWidthRatio: 0.5, meanBrightness: 0.5, motionScore: 0 }),
    ];
    for (const bytes of bad) {
      expect(isFaceCropPacket(bytes)).toBe(false);
      expect(decodeFaceCropInto(bytes, out)).toBe(false);
      const d = decodePacket(bytes);
      expect(isPacketError(d) || d.type !== 1).toBe(true);
    }
    expect({ ...out, pixels: Array.from(out.pixels) }).toEqual(before);
  });
});
