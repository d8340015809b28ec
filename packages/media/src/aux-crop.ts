/**
 * Type-4 aux crops (spec: Streaming protocol, type 4): a 448x448 JPEG of the face with context,
 * for the emotion and gaze models on the server. Encoded with jpeg-js (pure JS, no native code).
 */
import { AUX_SIZE, cropResizeRgb, type Box } from '@vitals/protocol';
import jpeg from 'jpeg-js';
import type { RgbImage } from './detector.js';

/** Spec range is 70-85. */
export const AUX_JPEG_QUALITY = 80;
/** The aux square spans this many face widths, so the face detector of the analyzer sees context. */
export const AUX_CONTEXT = 1.6;

/** The square around a face box that the aux crop covers. */
export function auxSquare(face: Box): Box {
  const side = Math.max(face.width, face.height) * AUX_CONTEXT;
  return { x: face.x + face.width / 2 - side / 2, y: face.y + face.height / 2 - side / 2, width: side, height: side };
}

export function rgbToRgba(rgb: Uint8Array): Uint8Array {
  const n = rgb.length / 3;
  const out = new Uint8Array(n * 4);
  for (let i = 0, j = 0; i < n; i++, j += 4) {
    out[j] = rgb[3 * i];
    out[j + 1] = rgb[3 * i + 1];
    out[j + 2] = rgb[3 * i + 2];
    out[j + 3] = 255;
  }
  return out;
}

/** 448x448 JPEG of the face (with context) in `image`. */
export function encodeAuxJpeg(image: RgbImage, face: Box): Uint8Array {
  const rgb = cropResizeRgb(image.data, image.width, image.height, auxSquare(face), AUX_SIZE, AUX_SIZE);
  const encoded = jpeg.encode({ data: rgbToRgba(rgb), width: AUX_SIZE, height: AUX_SIZE }, AUX_JPEG_QUALITY);
  return new Uint8Array(encoded.data.buffer, encoded.data.byteOffset, encoded.data.byteLength);
}
