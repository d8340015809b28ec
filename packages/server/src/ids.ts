/**
 * Identifiers minted on every request (request id, usage-log row, measurement), in the protocol's
 * formats (`ID_PATTERNS`), from a pool of CSPRNG bytes. protocol's `randomHex` asks WebCrypto for
 * each id, and `getRandomValues` costs microseconds per call in Node (a few percent of a signed
 * call's CPU); node:crypto fills 4 KB at once and each byte is handed out exactly once, as Node's
 * own `randomUUID` does.
 */
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let offset = pool.length;

/** `bytes` fresh random bytes as lowercase hex. */
export function pooledHex(bytes: number): string {
  if (bytes > pool.length) return randomFillSync(Buffer.alloc(bytes)).toString('hex');
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

export const newRequestId = (): string => `req_${pooledHex(12)}`;
/**
 * Time-ordered: 6 bytes of milliseconds since the epoch, then 6 bytes started at random each
 * millisecond (same 24-hex format).
 * New rows then land on the right-hand pages of the id indexes instead of pages scattered across
 * them, so a commit dirties a few pages rather than one per row (the creation time is in the row
 * anyway, and an id is not a secret: another key still gets a plain 404).
 */
class TimeOrdered {
  private ms = 0;
  private tail = 0;

  /**
   * Strictly increasing within the process: an id minted in the same millisecond as the one before
   * (or after the clock stepped back) keeps that millisecond and adds one to its random tail, so
   * rows written one after another (the rulings of successive requests, which may share a
   * millisecond and a store timestamp) sort in the order they were made.
   */
  next(): string {
    const now = Date.now();
    if (now > this.ms) {
      this.ms = now;
      this.tail = parseInt(pooledHex(6), 16) % 2 ** 47; // leave room to count up within a millisecond
    } else if (++this.tail >= 2 ** 48) {
      this.ms += 1;
      this.tail = 0;
    }
    return this.ms.toString(16).padStart(12, '0').slice(-12) + this.tail.toString(16).padStart(12, '0');
  }
}

const logIds = new TimeOrdered();
const measurementIds = new TimeOrdered();

export const newLogId = (): string => `log_${logIds.next()}`;
export const newMeasurementId = (): string => `meas_${measurementIds.next()}`;
