/** The frames file (spec: Frames file): 32-byte header, then packets. */
import { describe, expect, test } from 'vitest';
import {
  decodeFramesFile,
  decodeFramesHeader,
  encodeFramesFile,
  encodeFramesHeader,
  FRAMES_HEADER_BYTES,
} from '../src/frames-file.js';
import { encodeFaceCrop, encodeQuality, encodeTelemetry, encodeAuxChunks } from '../src/packets.js';

const crop = (seq: number) => encodeFaceCrop({ seq, tMicros: seq * 33_333, pixels: new Uint8Array(3888).fill(seq) });

describe('header', () => {
  test('layout: NCFRAMES, version 1, reserved zeros, count u32 LE @12, duration u64 LE @16', () => {
    const h = encodeFramesHeader({ packetCount: 0x0102, durationMicros: 60_000_000 });
    expect(h.length).toBe(32);
    expect(new TextDecoder().decode(h.subarray(0, 8))).toBe('NCFRAMES');
    expect(h[8]).toBe(1);
    expect(Array.from(h.subarray(9, 12))).toEqual([0, 0, 0]);
    expect(Array.from(h.subarray(12, 16))).toEqual([2, 1, 0, 0]);
    expect(new DataView(h.buffer).getBigUint64(16, true)).toBe(60_000_000n);
    expect(Array.from(h.subarray(24, 32))).toEqual(new Array(8).fill(0));
  });

  test.for([
    ['short', (h: Uint8Array) => h.subarray(0, 31)],
    ['bad magic', (h: Uint8Array) => Object.assign(h, { 0: 'X'.charCodeAt(0) })],
    ['version 2', (h: Uint8Array) => Object.assign(h, { 8: 2 })],
  ] as const)('decode refuses a header that is %s', ([, spoil]) => {
    const res = decodeFramesHeader(spoil(encodeFramesHeader({ packetCount: 1, durationMicros: 1 })));
    expect(res.ok).toBe(false);
  });
});

describe('whole file', () => {
  test('round trip of mixed packets', () => {
    const packets = [
      crop(0),
      encodeQuality({ tMicros: 1, faceWidthRatio: 0.3, meanBrightness: 0.5, motionScore: 0 }),
      crop(1),
      encodeTelemetry({ tMicros: 2, slots: new Uint8Array(56) }),
      ...encodeAuxChunks({ tMicros: 3, jpeg: new Uint8Array(9000) }),
    ];
    const file = encodeFramesFile(packets, 2_000_000);
    expect(file.length).toBe(FRAMES_HEADER_BYTES + packets.reduce((n, p) => n + p.length, 0));
    const res = decodeFramesFile(file);
    if (!res.ok) throw new Error(res.error);
    expect(res.header).toEqual({ version: 1, packetCount: packets.length, durationMicros: 2_000_000 });
    expect(res.packets.map((p) => p.type)).toEqual([1, 2, 1, 3, 4, 4]);
  });

  test.for([
    [
      'a packet count that disagrees',
      () => {
        const f = encodeFramesFile([crop(0), crop(1)], 1);
        new DataView(f.buffer).setUint32(12, 3, true);
        return f;
      },
    ],
    ['a truncated last packet', () => encodeFramesFile([crop(0), crop(1)], 1).subarray(0, 32 + 3900 + 100)],
    [
      'an unknown packet type',
      () => {
        const f = encodeFramesFile([crop(0)], 1);
        f[32] = 9;
        return f;
      },
    ],
  ] as const)('refuses %s', ([, make]) => {
    expect(decodeFramesFile(make()).ok).toBe(false);
  });
});
