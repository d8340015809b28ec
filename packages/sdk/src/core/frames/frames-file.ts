/**
 * Frames files (spec: Resources, "Frames file"): a 32-byte header and the same self-delimiting
 * packets as streaming. Thin wrappers over protocol's codecs.
 */
import {
  FRAMES_HEADER_BYTES,
  FRAMES_MAX_BYTES,
  decodeFramesFile,
  encodeAuxChunks,
  encodeFaceCrop,
  encodeFramesHeader,
  encodeQuality,
  encodeTelemetry,
  decodePacket,
  isPacketError,
  quantizeTelemetry,
  type FramesHeader,
  type Packet,
  type Telemetry,
} from '@vitals/protocol';
import { VitalsError } from '../errors.js';

export interface FaceCropInput {
  /** 36x36x3 RGB bytes (3888), NHWC. */
  pixels: Uint8Array;
  /** Microseconds since capture start. */
  tMicros: number;
  /** Frame index; defaults to the count of face crops so far. */
  seq?: number;
}

/** Encoders for the four packet types, shared by the frames writer and the stream session. */
export const packets = {
  faceCrop: (p: Required<Pick<FaceCropInput, 'seq'>> & FaceCropInput): Uint8Array => encodeFaceCrop(p),
  quality: (p: { tMicros: number; faceWidthRatio: number; meanBrightness: number; motionScore: number }): Uint8Array =>
    encodeQuality(p),
  /** Type 3 with the spec's quantization (unit values x255, angles clamped to +/-90 degrees). */
  telemetry: (p: { tMicros: number } & Telemetry): Uint8Array =>
    encodeTelemetry({ tMicros: p.tMicros, slots: quantizeTelemetry(p) }),
  /** Type 4 chunks of one 448x448 JPEG, each within the 8 KB message cap. */
  aux: (p: { tMicros: number; jpeg: Uint8Array }): Uint8Array[] => encodeAuxChunks(p),
};

/**
 * Builds a frames file incrementally.
 * @example
 * const w = new FramesWriter();
 * w.addFaceCrop({ pixels, tMicros: 0 });
 * const file = w.toBytes(); // upload with kind 'frames'
 */
export class FramesWriter {
  private readonly parts: Uint8Array[] = [];
  private bytes = FRAMES_HEADER_BYTES;
  private faceCrops = 0;
  private maxTMicros = 0;
  private durationOverride: number | undefined;

  constructor(private readonly maxBytes = FRAMES_MAX_BYTES) {}

  get packetCount(): number {
    return this.parts.length;
  }
  get frameCount(): number {
    return this.faceCrops;
  }
  /** Size of `toBytes()` so far. */
  get byteLength(): number {
    return this.bytes;
  }
  /** Header duration: the explicit one, else the latest packet time. */
  get durationMicros(): number {
    return this.durationOverride ?? this.maxTMicros;
  }
  set durationMicros(us: number) {
    this.durationOverride = us;
  }

  addFaceCrop(p: FaceCropInput): this {
    this.push(encodeFaceCrop({ seq: p.seq ?? this.faceCrops, tMicros: p.tMicros, pixels: p.pixels }), p.tMicros);
    this.faceCrops++;
    return this;
  }

  addQuality(p: { tMicros: number; faceWidthRatio: number; meanBrightness: number; motionScore: number }): this {
    return this.push(encodeQuality(p), p.tMicros);
  }

  addTelemetry(p: { tMicros: number } & Telemetry): this {
    return this.push(packets.telemetry(p), p.tMicros);
  }

  addAux(p: { tMicros: number; jpeg: Uint8Array }): this {
    for (const chunk of encodeAuxChunks(p)) this.push(chunk, p.tMicros);
    return this;
  }

  /** Adds an already-encoded packet (validated). */
  addPacket(bytes: Uint8Array): this {
    const p = decodePacket(bytes);
    if (isPacketError(p)) throw new VitalsError('invalid_packet', p.error);
    if (p.type === 1) this.faceCrops++;
    return this.push(bytes.slice(), p.tMicros);
  }

  /** The whole file: header (magic, version 1, packet count, duration) then the packets. */
  toBytes(): Uint8Array {
    const out = new Uint8Array(this.bytes);
    out.set(encodeFramesHeader({ packetCount: this.parts.length, durationMicros: this.durationMicros }), 0);
    let at = FRAMES_HEADER_BYTES;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  private push(bytes: Uint8Array, tMicros: number): this {
    if (this.bytes + bytes.length > this.maxBytes) {
      throw new VitalsError('object_too_large', `frames file would exceed ${this.maxBytes} bytes`);
    }
    this.parts.push(bytes);
    this.bytes += bytes.length;
    if (tMicros > this.maxTMicros) this.maxTMicros = tMicros;
    return this;
  }
}

/** Reads a frames file; throws `VitalsError('invalid_frames_file')` naming the first problem. */
export function readFramesFile(bytes: Uint8Array): { header: FramesHeader; packets: Packet[] } {
  const r = decodeFramesFile(bytes);
  if (!r.ok) throw new VitalsError('invalid_frames_file', r.error);
  return { header: r.header, packets: r.packets };
}
