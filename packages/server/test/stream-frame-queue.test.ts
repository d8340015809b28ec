/**
 * The session's frame queue decodes each face crop into a recycled packet: what comes out equals
 * decodePacket of what went in, in order, even when the message buffers are reused at once (the
 * queue keeps no view of a `ws` message), and the packets are few and reused.
 */
import { describe, expect, test } from 'vitest';
import { decodePacket, encodeFaceCrop, type FaceCropPacket } from '@vitals/protocol';
import { FrameQueue } from '../src/stream/frame-queue.js';

const crop = (k: number) =>
  encodeFaceCrop({
    seq: k,
    tMicros: 1_000_000 + k * 33_333,
    flags: k % 3,
    pixels: Uint8Array.from({ length: 3888 }, (_, i) => (i * 13 + k * 29) % 256),
  });
const plain = (p: FaceCropPacket) => ({ ...p, pixels: Array.from(p.pixels) });

describe('FrameQueue', () => {
  test('frames come out as decodePacket reads them, in order, though the message buffer is reused', () => {
    const q = new FrameQueue(15);
    const message = new Uint8Array(3900); // one buffer for every message, as a reused socket buffer
    const expected: ReturnType<typeof plain>[] = [];
    const got: ReturnType<typeof plain>[] = [];
    for (let k = 0; k < 40; k++) {
      const bytes = crop(k);
      expected.push(plain(decodePacket(bytes) as FaceCropPacket));
      message.set(bytes);
      q.push(message, k);
      message.fill(0);
      // Drain in uneven bursts: sometimes the queue holds several frames.
      if (k % 5 === 4 || q.length === q.capacity)
        while (q.length > 0) {
          const p = q.shift()!;
          expect(q.shiftedArrival).toBe(p.seq);
          got.push(plain(p));
        }
    }
    while (q.length > 0) got.push(plain(q.shift()!));
    expect(got).toEqual(expected);
  });

  test('packets are recycled: no more than the frames held at once, plus the one last shifted', () => {
    const q = new FrameQueue(15);
    const seen = new Set<FaceCropPacket>();
    for (let k = 0; k < 300; k++) {
      q.push(crop(k % 7), k);
      if (k % 3 === 2) while (q.length > 0) seen.add(q.shift()!);
    }
    expect(seen.size).toBeLessThanOrEqual(4);
  });

  test('after a full queue, only a few free packets are kept, and a steady stream reuses them', () => {
    const q = new FrameQueue(15);
    for (let k = 0; k < 15; k++) q.push(crop(k), k);
    expect(q.packetsHeld).toBe(15);
    while (q.length > 0) q.shift();
    expect(q.packetsHeld).toBeLessThanOrEqual(5);
    const seen = new Set<FaceCropPacket>();
    for (let k = 0; k < 100; k++) {
      q.push(crop(k), k);
      seen.add(q.shift()!);
    }
    expect(seen.size).toBeLessThanOrEqual(2);
    expect(q.packetsHeld).toBeLessThanOrEqual(5);
  });

  test('overflow handling: the oldest is shifted out, newest and oldest report the right frames', () => {
    const q = new FrameQueue(3);
    for (let k = 0; k < 3; k++) q.push(crop(k), k);
    expect(() => q.push(crop(3), 3)).toThrow(RangeError);
    q.shift(); // the caller drops the oldest
    q.push(crop(3), 3);
    expect([q.oldest()!.seq, q.newest()!.seq, q.length]).toEqual([1, 3, 3]);
    expect(() => q.push(new Uint8Array(3900), 4)).toThrow(RangeError);
  });

  test('refuses a message that is not a well-formed face crop', () => {
    const q = new FrameQueue(3);
    expect(() => q.push(new Uint8Array(3900), 0)).toThrow(TypeError);
    expect(q.length).toBe(0);
  });
});
