/**
 * Reassembles type-4 aux chunks into JPEGs by `tMicros` (spec: Type 4). Incomplete sets are
 * dropped silently after 2 s. Memory is bounded: at most MAX_SETS sets in flight (the oldest is
 * dropped to make room) and MAX_SET_BYTES per set (a larger set is dropped). A chunk that
 * contradicts its set (another `chunkCount`) is a protocol error.
 */
import { AUX_REASSEMBLY_TIMEOUT_MS, type AuxChunkPacket } from '@vitals/protocol';

export const MAX_SETS = 4;
export const MAX_SET_BYTES = 256 * 1024;

interface ChunkSet {
  count: number;
  chunks: Array<Uint8Array | undefined>;
  received: number;
  bytes: number;
  startedAt: number;
}

export type AuxResult = { jpeg: Uint8Array; tMicros: number } | { error: string } | null;

export class AuxAssembler {
  private readonly sets = new Map<number, ChunkSet>();
  dropped = 0;

  constructor(private readonly timeoutMs = AUX_REASSEMBLY_TIMEOUT_MS) {}

  /** Adds one chunk; returns the JPEG when its set is complete. */
  add(p: AuxChunkPacket, nowMs: number): AuxResult {
    this.sweep(nowMs);
    let set = this.sets.get(p.tMicros);
    if (!set) {
      if (this.sets.size >= MAX_SETS) this.dropOldest();
      set = { count: p.chunkCount, chunks: new Array(p.chunkCount), received: 0, bytes: 0, startedAt: nowMs };
      this.sets.set(p.tMicros, set);
    }
    if (set.count !== p.chunkCount) return { error: `aux chunkCount changed within the set at tMicros ${p.tMicros}` };
    if (set.chunks[p.chunkIndex] === undefined) set.received++;
    else set.bytes -= set.chunks[p.chunkIndex]!.length;
    // Copy: the payload is a view into the WebSocket message buffer.
    set.chunks[p.chunkIndex] = p.payload.slice();
    set.bytes += p.payload.length;
    if (set.bytes > MAX_SET_BYTES) {
      this.sets.delete(p.tMicros);
      this.dropped++;
      return null;
    }
    if (set.received < set.count) return null;
    this.sets.delete(p.tMicros);
    const jpeg = new Uint8Array(set.bytes);
    let off = 0;
    for (const c of set.chunks) {
      jpeg.set(c!, off);
      off += c!.length;
    }
    return { jpeg, tMicros: p.tMicros };
  }

  /** Drops sets older than the timeout (silently: emotion and gaze degrade, vitals do not). */
  sweep(nowMs: number): void {
    for (const [t, set] of this.sets) {
      if (nowMs - set.startedAt > this.timeoutMs) {
        this.sets.delete(t);
        this.dropped++;
      }
    }
  }

  get pendingSets(): number {
    return this.sets.size;
  }

  private dropOldest(): void {
    let oldest: number | undefined;
    let at = Infinity;
    for (const [t, set] of this.sets) {
      if (set.startedAt < at) {
        at = set.startedAt;
        oldest = t;
      }
    }
    if (oldest !== undefined) {
      this.sets.delete(oldest);
      this.dropped++;
    }
  }
}
