/**
 * Binary packets (spec: Streaming protocol, types 1-4). Offsets are checked byte by byte against
 * the spec's tables with a DataView of our own, not with the codec under test.
 */
import { describe, expect, test } from 'vitest';
import {
  decodePacket,
  encodeAuxChunks,
  encodeFaceCrop,
  encodeQuality,
  encodeTelemetry,
  isPacketError,
  packetLength,
  type AuxChunkPacket,
  type FaceCropPacket,
  type QualityPacket,
  type TelemetryPacket,
} from '../src/packets.js';

const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
const pixels = () => Uint8Array.from({ length: 3888 }, (_, i) => i % 251);

describe('type 1, face crop: 3900 bytes', () => {
  test('layout: type, protocol, seq u32 LE @2, tMicros u32 LE @6, flags u16 @10, pixels @12', () => {
    const p = encodeFaceCrop({ seq: 0x01020304, tMicros: 4_000_000_000, pixels: pixels() });
    expect(p.length).toBe(3900);
    expect([p[0], p[1]]).toEqual([1, 1]);
    expect([p[2], p[3], p[4], p[5]]).toEqual([4, 3, 2, 1]);
    expect(dv(p).getUint32(6, true)).toBe(4_000_000_000);
    expect(dv(p).getUint16(10, true)).toBe(0);
    expect(Array.from(p.subarray(12, 20))).toEqual(Array.from(pixels().subarray(0, 8)));
  });

  test('round trip', () => {
    const d = decodePacket(encodeFaceCrop({ seq: 7, tMicros: 33_333, pixels: pixels() })) as FaceCropPacket;
    expect(d).toMatchObject({ type: 1, seq: 7, tMicros: 33_333, flags: 0 });
    expect(d.pixels.length).toBe(3888);
  });

  test('encode refuses pixels of the wrong size', () => {
    expect(() => encodeFaceCrop({ seq: 0, tMicros: 0, pixels: new Uint8Array(10) })).toThrow(RangeError);
  });
});

describe('type 2, quality: exactly 18 bytes', () => {
  test('layout and round trip (f32 LE at 6, 10, 14)', () => {
    const p = encodeQuality({ tMicros: 1000, faceWidthRatio: 0.25, meanBrightness: 0.5, motionScore: 0.125 });
    expect(p.length).toBe(18);
    expect([p[0], p[1]]).toEqual([2, 1]);
    expect(dv(p).getFloat32(6, true)).toBe(0.25);
    expect(dv(p).getFloat32(10, true)).toBe(0.5);
    expect(dv(p).getFloat32(14, true)).toBe(0.125);
    expect(decodePacket(p) as QualityPacket).toEqual({
      type: 2,
      tMicros: 1000,
      faceWidthRatio: 0.25,
      meanBrightness: 0.5,
      motionScore: 0.125,
    });
  });
});

describe('type 3, telemetry: 62 bytes, 56 slots', () => {
  test('layout and round trip', () => {
    const slots = new Uint8Array(56);
    slots.set([10, 20, 30, 128, 127, 0, 64, 200, 5]);
    const p = encodeTelemetry({ tMicros: 5, slots });
    expect(p.length).toBe(62);
    expect([p[0], p[1], p[6], p[14]]).toEqual([3, 1, 10, 5]);
    const d = decodePacket(p) as TelemetryPacket;
    expect(Array.from(d.slots)).toEqual(Array.from(slots));
  });
});

describe('type 4, aux chunk', () => {
  test('a JPEG is split into chunks that each fit 8 KB and share tMicros', () => {
    const jpeg = Uint8Array.from({ length: 20_000 }, (_, i) => i & 255);
    const chunks = encodeAuxChunks({ tMicros: 99, jpeg });
    expect(chunks.length).toBe(Math.ceil(20_000 / (8192 - 20)));
    let total = 0;
    chunks.forEach((c, i) => {
      expect(c.length).toBeLessThanOrEqual(8192);
      const d = decodePacket(c) as AuxChunkPacket;
      expect(d).toMatchObject({
        type: 4,
        tMicros: 99,
        chunkIndex: i,
        chunkCount: chunks.length,
        width: 448,
        height: 448,
        flags: 0,
      });
      expect(dv(c).getUint32(16, true)).toBe(c.length - 20);
      total += d.payload.length;
    });
    expect(total).toBe(20_000);
    expect(packetLength(chunks[0])).toBe(chunks[0].length);
  });
});

describe('decodePacket refuses, never throws (protocol_error cases)', () => {
  const crop = () => encodeFaceCrop({ seq: 1, tMicros: 1, pixels: pixels() });
  const aux = () => encodeAuxChunks({ tMicros: 1, jpeg: new Uint8Array(100) })[0];
  const cases: Array<[string, () => Uint8Array]> = [
    ['empty', () => new Uint8Array(0)],
    ['one byte', () => new Uint8Array([1])],
    ['unknown type 0', () => new Uint8Array([0, 1, 0, 0])],
    ['unknown type 5', () => new Uint8Array([5, 1, 0, 0])],
    ['protocol version 2', () => Object.assign(crop(), { 1: 2 })],
    ['face crop one byte short', () => crop().subarray(0, 3899)],
    ['face crop one byte long', () => Uint8Array.from([...crop(), 0])],
    [
      'quality of 17 bytes',
      () => encodeQuality({ tMicros: 0, faceWidthRatio: 0, meanBrightness: 0, motionScore: 0 }).subarray(0, 17),
    ],
    [
      'quality of 19 bytes',
      () =>
        Uint8Array.from([...encodeQuality({ tMicros: 0, faceWidthRatio: 0, meanBrightness: 0, motionScore: 0 }), 0]),
    ],
    ['telemetry of 61 bytes', () => encodeTelemetry({ tMicros: 0, slots: new Uint8Array(56) }).subarray(0, 61)],
    [
      'telemetry reserved slot 9 not zero',
      () => {
        const s = new Uint8Array(56);
        s[9] = 1;
        return encodeTelemetry({ tMicros: 0, slots: s });
      },
    ],
    [
      'telemetry reserved slot 55 not zero',
      () => {
        const s = new Uint8Array(56);
        s[55] = 1;
        return encodeTelemetry({ tMicros: 0, slots: s });
      },
    ],
    ['aux shorter than its header', () => aux().subarray(0, 19)],
    [
      'aux byteLength larger than the payload',
      () => {
        const a = aux();
        dv(a).setUint32(16, 101, true);
        return a;
      },
    ],
    [
      'aux byteLength smaller than the payload',
      () => {
        const a = aux();
        dv(a).setUint32(16, 99, true);
        return a;
      },
    ],
    [
      'aux chunkCount zero',
      () => {
        const a = aux();
        dv(a).setUint16(8, 0, true);
        return a;
      },
    ],
    [
      'aux chunkIndex not below chunkCount',
      () => {
        const a = aux();
        dv(a).setUint16(6, 1, true);
        return a;
      },
    ],
    [
      'aux width not 448',
      () => {
        const a = aux();
        dv(a).setUint16(10, 447, true);
        return a;
      },
    ],
  ];
  test.for(cases)('%s', ([, make]) => {
    const res = decodePacket(make());
    expect(isPacketError(res)).toBe(true);
  });
});
