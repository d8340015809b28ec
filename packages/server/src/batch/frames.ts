/**
 * Frames-file checks beyond the codec (spec: Frames file; CLARIFICATIONS 21: a wrong header is
 * accepted at creation and the job fails with `invalid_frames_file`). The header must carry the
 * magic and version 1, its packet count must match the packets, every packet must decode, at least
 * one face crop (type 1) must be present, and the duration must be positive, at most one hour, and
 * cover the face crops (none later than the duration plus one second).
 */
import { decodeFramesFile, type Packet } from '@vitals/protocol';

export const FRAMES_MAX_DURATION_MICROS = 3600 * 1e6;
const DURATION_SLACK_MICROS = 1e6;

export type FramesCheck = { ok: true; packets: Packet[]; durationMicros: number } | { ok: false; message: string };

export function checkFramesFile(bytes: Uint8Array): FramesCheck {
  const file = decodeFramesFile(bytes);
  if (!file.ok) return { ok: false, message: `invalid frames file: ${file.error}` };
  const { durationMicros } = file.header;
  if (durationMicros <= 0) return { ok: false, message: 'invalid frames file: header duration is zero' };
  if (durationMicros > FRAMES_MAX_DURATION_MICROS)
    return { ok: false, message: 'invalid frames file: header duration exceeds one hour' };
  let crops = 0;
  let first = Infinity;
  let last = -Infinity;
  for (const p of file.packets) {
    if (p.type !== 1) continue;
    crops++;
    first = Math.min(first, p.tMicros);
    last = Math.max(last, p.tMicros);
  }
  if (crops === 0) return { ok: false, message: 'invalid frames file: no face-crop (type 1) packets' };
  if (last - first > durationMicros + DURATION_SLACK_MICROS)
    return { ok: false, message: 'invalid frames file: packets span more time than the header duration' };
  return { ok: true, packets: file.packets, durationMicros };
}
