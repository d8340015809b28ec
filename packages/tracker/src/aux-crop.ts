/**
 * Type-4 aux crops (spec: Streaming protocol, type 4): a 448x448 JPEG of the face with context,
 * for the emotion and gaze models on the server. JPEG encoding is a port (`AuxEncoder`): ffmpeg in
 * Node (media's jpeg-encoder.ts).
 */
import { AUX_SIZE, cropResizeRgb, type Box } from '@vitals/protocol';
import type { RgbImage } from './detector.js';

/** The aux square spans this many face widths, so the face detector of the analyzer sees context. */
export const AUX_CONTEXT = 1.6;

/** The square around a face box that the aux crop covers. */
export function auxSquare(face: Box): Box {
  const side = Math.max(face.width, face.height) * AUX_CONTEXT;
  return {
    x: face.x + face.width / 2 - side / 2,
    y: face.y + face.height / 2 - side / 2,
    width: side,
    height: side,
  };
}

/** 448x448 RGB of the face (with context) in `image`, ready for JPEG encoding. */
export function auxRgb(image: RgbImage, face: Box): Uint8Array {
  return cropResizeRgb(image.data, image.width, image.height, auxSquare(face), AUX_SIZE, AUX_SIZE, image.channels ?? 3);
}

/** Encodes 448x448 RGB aux crops to JPEG, in order; `finish` waits for the last one. */
export interface AuxEncoder {
  encode(rgb: Uint8Array): Promise<Uint8Array>;
  finish(): Promise<unknown>;
}
