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
 * Time-ordered: 6 bytes of milliseconds since the epoch, then 6 random bytes (same 24-hex format).
 * New rows then land on the right-hand pages of the id indexes instead of pages scattered across
 * them, so a commit dirties a few pages rather than one per row (the creation time is in the row
 * anyway, and an id is not a secret: another key still gets a plain 404).
 */
function timeOrderedHex(): string {
  return Date.now().toString(16).padStart(12, '0').slice(-12) + pooledHex(6);
}

export const newLogId = (): string => `log_${timeOrderedHex()}`;
export const newMeasurementId = (): string => `meas_${timeOrderedHex()}`;
