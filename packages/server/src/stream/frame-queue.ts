/**
 * The unprocessed-frame queue of one session (spec: Limits, 15 frames): a fixed ring of decoded
 * frames and their arrival times (performance.now()). A frame is decoded into a packet of the
 * session's own (decodeFaceCropInto copies its header and pixels out of the `ws` message), and
 * packets are recycled: queueing allocates only the short-lived view the copy reads, and a queued frame does
 * not keep the socket's read buffer alive (a view of it would, until the frame is processed, and
 * outlive a young-generation collection under load: the streaming benchmark's heap profile).
 * Besides the queued frames it keeps at most SPARE_PACKETS free packets (16 KB): a session that
 * once had a full queue (a client catching up) does not keep 15 frames' worth for the rest of its
 * life. The caller keeps `length < capacity` before `push` (it drops the oldest on overflow).
 */
import { createFaceCropPacket, decodeFaceCropInto, type FaceCropPacket } from '@vitals/protocol';

/** Free packets kept for reuse: a steady stream needs two (one queued, one being processed). */
const SPARE_PACKETS = 4;

export class FrameQueue {
  private readonly items: Array<FaceCropPacket | undefined>;
  private readonly arrivals: Float64Array;
  /** Packets free for the next `push`. */
  private readonly spare: FaceCropPacket[] = [];
  /** The packet the last `shift()` returned: its caller may still read it until the next push or shift. */
  private lent: FaceCropPacket | undefined;
  private head = 0;
  length = 0;
  /** Arrival time of the frame the last `shift()` returned. */
  shiftedArrival = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<FaceCropPacket | undefined>(capacity).fill(undefined);
    this.arrivals = new Float64Array(capacity);
  }

  /**
   * Decodes a well-formed type-1 message (isFaceCropPacket) into a recycled packet and queues it.
   * The message is not referenced afterwards.
   */
  push(bytes: Uint8Array, arrivedAt: number): void {
    if (this.length >= this.capacity) throw new RangeError('frame queue full');
    this.giveBack();
    const packet = this.spare.pop() ?? createFaceCropPacket();
    if (!decodeFaceCropInto(bytes, packet)) {
      this.spare.push(packet);
      throw new TypeError('not a well-formed face-crop packet');
    }
    const i = (this.head + this.length) % this.capacity;
    this.items[i] = packet;
    this.arrivals[i] = arrivedAt;
    this.length++;
  }

  /**
   * Removes and returns the oldest frame (its arrival time in `shiftedArrival`). The packet is
   * recycled by the next `push` or `shift`: read it before either.
   */
  shift(): FaceCropPacket | undefined {
    this.giveBack();
    if (this.length === 0) return undefined;
    const i = this.head;
    const item = this.items[i];
    this.items[i] = undefined;
    this.shiftedArrival = this.arrivals[i];
    this.head = (i + 1) % this.capacity;
    this.length--;
    this.lent = item;
    return item;
  }

  oldest(): FaceCropPacket | undefined {
    return this.length > 0 ? this.items[this.head] : undefined;
  }

  newest(): FaceCropPacket | undefined {
    return this.length > 0 ? this.items[(this.head + this.length - 1) % this.capacity] : undefined;
  }

  /** Packets this queue holds: queued, free and the one last shifted (memory per session). */
  get packetsHeld(): number {
    return this.length + this.spare.length + (this.lent ? 1 : 0);
  }

  /** Drops every queued frame and every packet (the session ended). */
  clear(): void {
    this.items.fill(undefined);
    this.spare.length = 0;
    this.lent = undefined;
    this.head = 0;
    this.length = 0;
  }

  private giveBack(): void {
    if (this.lent) {
      if (this.spare.length < SPARE_PACKETS) this.spare.push(this.lent);
      this.lent = undefined;
    }
  }
}
