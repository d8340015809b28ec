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
export const newLogId = (): string => `log_${pooledHex(12)}`;
export const newMeasurementId = (): string => `meas_${pooledHex(12)}`;
