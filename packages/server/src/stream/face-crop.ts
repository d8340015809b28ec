/**
 * The per-frame fast path for type-1 packets (spec: Type 1): a well-formed face crop is read
 * straight from the `ws` Buffer; anything else goes through decodePacket and its messages.
 */
import { FACE_CROP_PACKET_BYTES, PROTOCOL_VERSION, type FaceCropPacket } from '@vitals/protocol';

/** A well-formed type-1 packet (the same checks decodePacket makes for type 1). */
export function isFaceCrop(data: Buffer): boolean {
  return data.length === FACE_CROP_PACKET_BYTES && data[0] === 1 && data[1] === PROTOCOL_VERSION;
}

/** decodePacket's type-1 result read straight from the Buffer (no DataView per frame). */
export function faceCropOf(data: Buffer): FaceCropPacket {
  return {
    type: 1,
    seq: data.readUInt32LE(2),
    tMicros: data.readUInt32LE(6),
    flags: data.readUInt16LE(10),
    pixels: data.subarray(12, FACE_CROP_PACKET_BYTES),
  };
}
