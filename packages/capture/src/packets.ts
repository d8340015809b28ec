/** Packets (types 1-3, what the tracker makes) to wire bytes, for the worker, the socket and the frames file. */
import { encodeFaceCrop, encodeQuality, encodeTelemetry, type Packet } from '@vitals/protocol';

export function packetBytes(p: Packet): Uint8Array {
  switch (p.type) {
    case 1:
      return encodeFaceCrop(p);
    case 2:
      return encodeQuality(p);
    case 3:
      return encodeTelemetry(p);
    default:
      throw new Error('the capture makes no type-4 packets');
  }
}
