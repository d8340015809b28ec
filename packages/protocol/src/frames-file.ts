/**
 * The frames file (spec: Frames file): a 32-byte header then concatenated packets.
 * Offset 0 magic `NCFRAMES`; 8 version=1; 9..11 reserved; 12 packet count u32 LE;
 * 16 duration µs u64 LE; 24..31 reserved.
 */
import { PROTOCOL_VERSION } from './limits.js';
import { decodePacket, isPacketError, packetLength, type Packet } from './packets.js';

export const FRAMES_MAGIC = 'NCFRAMES';
export const FRAMES_HEADER_BYTES = 32;

export interface FramesHeader {
  version: number;
  packetCount: number;
  durationMicros: number;
}

export function encodeFramesHeader(h: { packetCount: number; durationMicros: number }): Uint8Array {
  const out = new Uint8Array(FRAMES_HEADER_BYTES);
  for (let i = 0; i < 8; i++) out[i] = FRAMES_MAGIC.charCodeAt(i);
  out[8] = PROTOCOL_VERSION;
  const dv = new DataView(out.buffer);
  dv.setUint32(12, h.packetCount >>> 0, true);
  dv.setBigUint64(16, BigInt(Math.max(0, Math.round(h.durationMicros))), true);
  return out;
}

/** Builds a whole frames file from encoded packets. */
export function encodeFramesFile(packets: Uint8Array[], durationMicros: number): Uint8Array {
  const header = encodeFramesHeader({ packetCount: packets.length, durationMicros });
  let total = header.length;
  for (const p of packets) total += p.length;
  const out = new Uint8Array(total);
  out.set(header, 0);
  let at = header.length;
  for (const p of packets) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export type HeaderResult = { ok: true; header: FramesHeader } | { ok: false; error: string };

export function decodeFramesHeader(bytes: Uint8Array): HeaderResult {
  if (bytes.length < FRAMES_HEADER_BYTES) return { ok: false, error: 'file shorter than the 32-byte header' };
  for (let i = 0; i < 8; i++) {
    if (bytes[i] !== FRAMES_MAGIC.charCodeAt(i)) return { ok: false, error: 'magic is not NCFRAMES' };
  }
  if (bytes[8] !== PROTOCOL_VERSION) return { ok: false, error: `unsupported frames version ${bytes[8]}` };
  const dv = new DataView(bytes.buffer, bytes.byteOffset, FRAMES_HEADER_BYTES);
  const duration = dv.getBigUint64(16, true);
  if (duration > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, error: 'duration out of range' };
  return {
    ok: true,
    header: { version: bytes[8], packetCount: dv.getUint32(12, true), durationMicros: Number(duration) },
  };
}

export type FramesResult = { ok: true; header: FramesHeader; packets: Packet[] } | { ok: false; error: string };

/**
 * Decodes a whole frames file and checks the header against its contents: the packet count must
 * match, and every packet must be valid.
 */
export function decodeFramesFile(bytes: Uint8Array): FramesResult {
  const head = decodeFramesHeader(bytes);
  if (!head.ok) return head;
  const packets: Packet[] = [];
  let at = FRAMES_HEADER_BYTES;
  while (at < bytes.length) {
    const rest = bytes.subarray(at);
    const len = packetLength(rest);
    if (typeof len !== 'number') return { ok: false, error: `packet ${packets.length}: ${len.error}` };
    if (len > rest.length) return { ok: false, error: `packet ${packets.length} truncated` };
    const p = decodePacket(rest.subarray(0, len));
    if (isPacketError(p)) return { ok: false, error: `packet ${packets.length}: ${p.error}` };
    packets.push(p);
    at += len;
  }
  if (packets.length !== head.header.packetCount)
    return { ok: false, error: `header says ${head.header.packetCount} packets, file holds ${packets.length}` };
  return { ok: true, header: head.header, packets };
}
