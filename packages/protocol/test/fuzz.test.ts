/**
 * Property-based fuzzing of the wire's byte parsers (issue 19): the four packet types and the frames
 * file. Whatever the bytes, a parser answers a value or a refusal, never a throw, and what it
 * returns is bounded by what it was given. Runs are sized so this file takes about a second.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  AUX_HEADER_BYTES,
  FACE_CROP_PACKET_BYTES,
  FRAMES_HEADER_BYTES,
  QUALITY_PACKET_BYTES,
  TELEMETRY_PACKET_BYTES,
  TELEMETRY_SLOTS,
  decodeFramesFile,
  decodeFramesHeader,
  decodePacket,
  encodeAuxChunks,
  encodeFaceCrop,
  encodeFramesFile,
  encodeFramesHeader,
  encodeQuality,
  encodeTelemetry,
  isPacketError,
  packetLength,
  WS_MAX_MESSAGE_BYTES,
} from '../src/index.js';

const valid: Record<string, Uint8Array> = {
  crop: encodeFaceCrop({ seq: 7, tMicros: 1_000_000, pixels: new Uint8Array(3888).fill(120) }),
  quality: encodeQuality({ tMicros: 5, faceWidthRatio: 0.4, meanBrightness: 0.5, motionScore: 0.1 }),
  telemetry: encodeTelemetry({ tMicros: 9, slots: new Uint8Array(TELEMETRY_SLOTS) }),
  aux: encodeAuxChunks({ tMicros: 11, jpeg: new Uint8Array(300).fill(9) })[0],
};

/** A byte string: random, or a valid packet with bytes flipped, cut short or extended. */
const mutated = (base: Uint8Array): fc.Arbitrary<Uint8Array> =>
  fc
    .tuple(
      fc.array(fc.tuple(fc.nat(base.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
      fc.integer({ min: -base.length, max: 64 }),
    )
    .map(([flips, resize]) => {
      const len = Math.max(0, base.length + resize);
      const out = new Uint8Array(len);
      out.set(base.subarray(0, Math.min(len, base.length)));
      for (const [i, v] of flips) if (i < len) out[i] = v;
      return out;
    });

const packetBytes = fc.oneof(
  fc.uint8Array({ maxLength: WS_MAX_MESSAGE_BYTES + 16 }),
  ...Object.values(valid).map(mutated),
);

/** The size a packet of this type must have, or the bound of an aux chunk. */
function isPacketShaped(p: ReturnType<typeof decodePacket>, bytes: Uint8Array): boolean {
  if (isPacketError(p)) return typeof p.error === 'string' && p.error.length > 0;
  if (p.type === 1) return bytes.length === FACE_CROP_PACKET_BYTES && p.pixels.length === 3888;
  if (p.type === 2) return bytes.length === QUALITY_PACKET_BYTES;
  if (p.type === 3) return bytes.length === TELEMETRY_PACKET_BYTES;
  return p.payload.length === bytes.length - AUX_HEADER_BYTES;
}

describe('packets: any bytes give a packet or a refusal, never a throw', () => {
  test('decodePacket', () => {
    fc.assert(
      fc.property(packetBytes, (bytes) => {
        expect(isPacketShaped(decodePacket(bytes), bytes)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  test('packetLength answers a length within the bytes it may read, or a refusal', () => {
    fc.assert(
      fc.property(packetBytes, (bytes) => {
        const n = packetLength(bytes);
        if (typeof n === 'number') expect(n).toBeGreaterThanOrEqual(QUALITY_PACKET_BYTES);
        else expect(n.error).toEqual(expect.any(String));
      }),
      { numRuns: 1000 },
    );
  });

  test('a face crop decodes to what was encoded (round trip)', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 0, max: 0xffff }),
        fc.uint8Array({ minLength: 3888, maxLength: 3888 }),
        (seq, tMicros, flags, pixels) => {
          const bytes = encodeFaceCrop({ seq: seq >>> 0, tMicros: tMicros >>> 0, pixels, flags });
          const p = decodePacket(bytes);
          expect(p).toMatchObject({ type: 1, seq: seq >>> 0, tMicros: tMicros >>> 0, flags });
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('frames file: any bytes give a file or a refusal, bounded by the input', () => {
  const file = encodeFramesFile(Object.values(valid), 30_000_000);
  const framesBytes = fc.oneof(
    fc.uint8Array({ maxLength: 4096 }),
    mutated(file),
    // A header that claims far more packets or time than the bytes hold.
    fc
      .tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.nat(), fc.uint8Array({ maxLength: 512 }))
      .map(([packetCount, durationMicros, rest]) => {
        const head = encodeFramesHeader({ packetCount, durationMicros });
        const out = new Uint8Array(head.length + rest.length);
        out.set(head);
        out.set(rest, head.length);
        return out;
      }),
  );

  test('decodeFramesFile and decodeFramesHeader', () => {
    fc.assert(
      fc.property(framesBytes, (bytes) => {
        const h = decodeFramesHeader(bytes);
        if (!h.ok) expect(h.error).toEqual(expect.any(String));
        const r = decodeFramesFile(bytes);
        if (!r.ok) {
          expect(r.error).toEqual(expect.any(String));
          return;
        }
        // Never more packets than the bytes after the header can hold (no allocation on a claim).
        expect(r.packets.length).toBeLessThanOrEqual((bytes.length - FRAMES_HEADER_BYTES) / QUALITY_PACKET_BYTES);
        expect(r.packets.length).toBe(r.header.packetCount);
      }),
      { numRuns: 1500 },
    );
  });

  test('the valid file itself still decodes', () => {
    expect(decodeFramesFile(file)).toMatchObject({ ok: true, header: { packetCount: 4 } });
  });
});
