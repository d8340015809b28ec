/**
 * Binary packets of the streaming protocol and the frames file (spec: Streaming protocol).
 * Every packet starts with `type` (u8) then the protocol version (u8); integers little-endian.
 * Decoders never throw: they return a typed packet or a `PacketError` naming what is wrong.
 */
import { PROTOCOL_VERSION, WS_MAX_MESSAGE_BYTES } from './limits.js';

export const CROP_SIZE = 36;
export const CROP_PIXEL_BYTES = CROP_SIZE * CROP_SIZE * 3; // 3888
export const FACE_CROP_PACKET_BYTES = 12 + CROP_PIXEL_BYTES; // 3900
export const QUALITY_PACKET_BYTES = 18;
export const TELEMETRY_PACKET_BYTES = 62;
export const TELEMETRY_SLOTS = 56;
export const TELEMETRY_USED_SLOTS = 9;
export const AUX_HEADER_BYTES = 20;
export const AUX_SIZE = 448;
export const AUX_MAX_CHUNK_PAYLOAD = WS_MAX_MESSAGE_BYTES - AUX_HEADER_BYTES;

export interface FaceCropPacket {
  type: 1;
  seq: number;
  tMicros: number;
  flags: number;
  /** 36x36x3 RGB, NHWC, uint8. */
  pixels: Uint8Array;
}
export interface QualityPacket {
  type: 2;
  tMicros: number;
  faceWidthRatio: number;
  meanBrightness: number;
  motionScore: number;
}
export interface TelemetryPacket {
  type: 3;
  tMicros: number;
  /** 56 quantized slots; 9..55 reserved and zero. */
  slots: Uint8Array;
}
export interface AuxChunkPacket {
  type: 4;
  tMicros: number;
  chunkIndex: number;
  chunkCount: number;
  width: number;
  height: number;
  flags: number;
  byteLength: number;
  payload: Uint8Array;
}
export type Packet = FaceCropPacket | QualityPacket | TelemetryPacket | AuxChunkPacket;

export interface PacketError {
  error: string;
}

export function isPacketError(x: Packet | PacketError): x is PacketError {
  return (x as PacketError).error !== undefined;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The size of the packet starting at `bytes[0]`, or an error: packets are self-delimiting. */
export function packetLength(bytes: Uint8Array): number | PacketError {
  if (bytes.length < 2) return { error: 'truncated packet header' };
  switch (bytes[0]) {
    case 1:
      return FACE_CROP_PACKET_BYTES;
    case 2:
      return QUALITY_PACKET_BYTES;
    case 3:
      return TELEMETRY_PACKET_BYTES;
    case 4: {
      if (bytes.length < AUX_HEADER_BYTES) return { error: 'truncated aux header' };
      return AUX_HEADER_BYTES + view(bytes).getUint32(16, true);
    }
    default:
      return { error: `unknown packet type ${bytes[0]}` };
  }
}

/**
 * Decodes exactly one packet that fills `bytes` (one WebSocket message, or one slice of a frames
 * file cut by `packetLength`). Every rule of the spec is checked; the first broken one is returned.
 */
export function decodePacket(bytes: Uint8Array): Packet | PacketError {
  if (bytes.length < 2) return { error: 'packet shorter than its 2-byte header' };
  const type = bytes[0];
  if (type < 1 || type > 4) return { error: `unknown packet type ${type}` };
  if (bytes[1] !== PROTOCOL_VERSION) return { error: `unsupported protocol version ${bytes[1]}` };
  const dv = view(bytes);
  switch (type) {
    case 1: {
      if (bytes.length !== FACE_CROP_PACKET_BYTES)
        return { error: `face-crop packet must be ${FACE_CROP_PACKET_BYTES} bytes, got ${bytes.length}` };
      return {
        type: 1,
        seq: dv.getUint32(2, true),
        tMicros: dv.getUint32(6, true),
        flags: dv.getUint16(10, true),
        pixels: bytes.subarray(12, FACE_CROP_PACKET_BYTES),
      };
    }
    case 2: {
      if (bytes.length !== QUALITY_PACKET_BYTES)
        return { error: `quality packet must be ${QUALITY_PACKET_BYTES} bytes, got ${bytes.length}` };
      return {
        type: 2,
        tMicros: dv.getUint32(2, true),
        faceWidthRatio: dv.getFloat32(6, true),
        meanBrightness: dv.getFloat32(10, true),
        motionScore: dv.getFloat32(14, true),
      };
    }
    case 3: {
      if (bytes.length !== TELEMETRY_PACKET_BYTES)
        return { error: `telemetry packet must be ${TELEMETRY_PACKET_BYTES} bytes, got ${bytes.length}` };
      const slots = bytes.subarray(6, 6 + TELEMETRY_SLOTS);
      for (let i = TELEMETRY_USED_SLOTS; i < TELEMETRY_SLOTS; i++) {
        if (slots[i] !== 0) return { error: `telemetry reserved slot ${i} is not zero` };
      }
      return { type: 3, tMicros: dv.getUint32(2, true), slots };
    }
    default: {
      if (bytes.length < AUX_HEADER_BYTES) return { error: 'aux-chunk packet shorter than its header' };
      const chunkIndex = dv.getUint16(6, true);
      const chunkCount = dv.getUint16(8, true);
      const byteLength = dv.getUint32(16, true);
      if (chunkCount === 0) return { error: 'aux-chunk chunkCount is zero' };
      if (chunkIndex >= chunkCount) return { error: 'aux-chunk chunkIndex not below chunkCount' };
      if (bytes.length - AUX_HEADER_BYTES !== byteLength)
        return { error: 'aux-chunk payload length differs from byteLength' };
      const width = dv.getUint16(10, true);
      const height = dv.getUint16(12, true);
      if (width !== AUX_SIZE || height !== AUX_SIZE) return { error: 'aux-chunk must be 448x448' };
      return {
        type: 4,
        tMicros: dv.getUint32(2, true),
        chunkIndex,
        chunkCount,
        width,
        height,
        flags: dv.getUint16(14, true),
        byteLength,
        payload: bytes.subarray(AUX_HEADER_BYTES),
      };
    }
  }
}

/** A type-1 packet with its own pixel buffer, to decode into again and again (decodeFaceCropInto). */
export function createFaceCropPacket(): FaceCropPacket {
  return { type: 1, seq: 0, tMicros: 0, flags: 0, pixels: new Uint8Array(CROP_PIXEL_BYTES) };
}

/** Whether `bytes` is a well-formed type-1 packet: the checks decodePacket makes for type 1. */
export function isFaceCropPacket(bytes: Uint8Array): boolean {
  return bytes.length === FACE_CROP_PACKET_BYTES && bytes[0] === 1 && bytes[1] === PROTOCOL_VERSION;
}

/** Little-endian u32 at `at`, read without a DataView. */
function u32(bytes: Uint8Array, at: number): number {
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16)) + bytes[at + 3] * 0x1000000;
}

/** `tMicros` of a well-formed type-1 packet (isFaceCropPacket), read in place. */
export function faceCropTMicros(bytes: Uint8Array): number {
  return u32(bytes, 6);
}

/**
 * decodePacket's type-1 result written into `out` (from createFaceCropPacket): the header fields
 * set and the pixels copied into `out.pixels`, so `bytes` may be reused or released at once and a
 * stream of frames decodes into a few reused packets. Returns false, leaving `out` unchanged, when
 * `bytes` is not a well-formed type-1 packet (decodePacket then names the error).
 */
export function decodeFaceCropInto(bytes: Uint8Array, out: FaceCropPacket): boolean {
  if (!isFaceCropPacket(bytes) || out.pixels.length !== CROP_PIXEL_BYTES) return false;
  out.seq = u32(bytes, 2);
  out.tMicros = u32(bytes, 6);
  out.flags = bytes[10] | (bytes[11] << 8);
  out.pixels.set(bytes.subarray(12, FACE_CROP_PACKET_BYTES));
  return true;
}

export function encodeFaceCrop(p: { seq: number; tMicros: number; pixels: Uint8Array; flags?: number }): Uint8Array {
  if (p.pixels.length !== CROP_PIXEL_BYTES) throw new RangeError(`pixels must be ${CROP_PIXEL_BYTES} bytes`);
  const out = new Uint8Array(FACE_CROP_PACKET_BYTES);
  const dv = view(out);
  out[0] = 1;
  out[1] = PROTOCOL_VERSION;
  dv.setUint32(2, p.seq >>> 0, true);
  dv.setUint32(6, p.tMicros >>> 0, true);
  dv.setUint16(10, p.flags ?? 0, true);
  out.set(p.pixels, 12);
  return out;
}

export function encodeQuality(p: Omit<QualityPacket, 'type'>): Uint8Array {
  const out = new Uint8Array(QUALITY_PACKET_BYTES);
  const dv = view(out);
  out[0] = 2;
  out[1] = PROTOCOL_VERSION;
  dv.setUint32(2, p.tMicros >>> 0, true);
  dv.setFloat32(6, p.faceWidthRatio, true);
  dv.setFloat32(10, p.meanBrightness, true);
  dv.setFloat32(14, p.motionScore, true);
  return out;
}

export function encodeTelemetry(p: { tMicros: number; slots: Uint8Array }): Uint8Array {
  const out = new Uint8Array(TELEMETRY_PACKET_BYTES);
  out[0] = 3;
  out[1] = PROTOCOL_VERSION;
  view(out).setUint32(2, p.tMicros >>> 0, true);
  out.set(p.slots.subarray(0, TELEMETRY_SLOTS), 6);
  return out;
}

/** Splits one JPEG into type-4 chunks that each fit a WebSocket message (8 KB). */
export function encodeAuxChunks(p: { tMicros: number; jpeg: Uint8Array; chunkPayload?: number }): Uint8Array[] {
  const size = Math.min(p.chunkPayload ?? AUX_MAX_CHUNK_PAYLOAD, AUX_MAX_CHUNK_PAYLOAD);
  const count = Math.max(1, Math.ceil(p.jpeg.length / size));
  if (count > 0xffff) throw new RangeError('aux JPEG too large');
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const part = p.jpeg.subarray(i * size, Math.min(p.jpeg.length, (i + 1) * size));
    const out = new Uint8Array(AUX_HEADER_BYTES + part.length);
    const dv = view(out);
    out[0] = 4;
    out[1] = PROTOCOL_VERSION;
    dv.setUint32(2, p.tMicros >>> 0, true);
    dv.setUint16(6, i, true);
    dv.setUint16(8, count, true);
    dv.setUint16(10, AUX_SIZE, true);
    dv.setUint16(12, AUX_SIZE, true);
    dv.setUint16(14, 0, true);
    dv.setUint32(16, part.length, true);
    out.set(part, AUX_HEADER_BYTES);
    chunks.push(out);
  }
  return chunks;
}
