/**
 * Packets of a video as a frames file (spec: Frames file): the same bytes a client would upload,
 * so a processed video can be stored, cached or replayed through the frames path.
 */
import { encodeFaceCrop, encodeFramesFile, encodeQuality, encodeTelemetry, type Packet } from '@vitals/protocol';

/** One packet back to its wire bytes. Aux chunks keep their original header fields. */
export function encodePacket(p: Packet): Uint8Array {
  switch (p.type) {
    case 1:
      return encodeFaceCrop(p);
    case 2:
      return encodeQuality(p);
    case 3:
      return encodeTelemetry(p);
    case 4: {
      const out = new Uint8Array(20 + p.payload.length);
      const dv = new DataView(out.buffer);
      out[0] = 4;
      out[1] = 1;
      dv.setUint32(2, p.tMicros >>> 0, true);
      dv.setUint16(6, p.chunkIndex, true);
      dv.setUint16(8, p.chunkCount, true);
      dv.setUint16(10, p.width, true);
      dv.setUint16(12, p.height, true);
      dv.setUint16(14, p.flags, true);
      dv.setUint32(16, p.payload.length, true);
      out.set(p.payload, 20);
      return out;
    }
  }
}

/** A frames file holding `packets`; the duration is the last packet's time. */
export function packetsToFramesFile(packets: Packet[]): Uint8Array {
  const duration = packets.reduce((m, p) => Math.max(m, p.tMicros), 0);
  return encodeFramesFile(packets.map(encodePacket), duration);
}
