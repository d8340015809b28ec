/**
 * Turning camera frames into type-1 packets in a browser: protocol's crop rule (Kalman-smoothed
 * box, area-average resize to 36x36, alpha dropped) applied to `ImageData` from a canvas.
 */
import { BoxKalman, CROP_SIZE, cropResizeRgb, type Box, type BoxKalmanOptions } from '@vitals/protocol';

export { BoxKalman, cropResizeRgb, meanLuma, type Box, type BoxKalmanOptions } from '@vitals/protocol';

/** The part of `ImageData` used here (RGBA, row-major), so Node tests can pass plain objects. */
export interface ImageDataLike {
  data: Uint8ClampedArray | Uint8Array;
  width: number;
  height: number;
}

/** Grows a box by `padRatio` of its size on each side (the session's `frameSpec.padRatio`). */
export function padBox(box: Box, padRatio: number): Box {
  if (!padRatio) return box;
  const dx = box.width * padRatio;
  const dy = box.height * padRatio;
  return { x: box.x - dx, y: box.y - dy, width: box.width + 2 * dx, height: box.height + 2 * dy };
}

/**
 * Crops `box` out of RGBA image data into the 3888-byte 36x36 RGB pixels of a type-1 packet.
 * @example
 * ctx.drawImage(video, 0, 0); const img = ctx.getImageData(0, 0, w, h);
 * session.sendFrame({ pixels: cropFromImageData(img, faceBox) });
 */
export function cropFromImageData(image: ImageDataLike, box: Box, padRatio = 0): Uint8Array {
  return cropResizeRgb(image.data, image.width, image.height, padBox(box, padRatio), CROP_SIZE, CROP_SIZE, 4);
}

/**
 * Stateful cropper: smooths detected boxes with the Kalman filter, then crops. Pass `null` when
 * no face is detected: the track resets and no frame is produced (the spec: send no frame).
 */
export class FaceCropper {
  private readonly kalman: BoxKalman;
  private readonly padRatio: number;

  /** `padRatio` must come from the session's `frameSpec` (0 for the pulse crop). */
  constructor(opts: { padRatio?: number; kalman?: BoxKalmanOptions } = {}) {
    this.kalman = new BoxKalman(opts.kalman);
    this.padRatio = opts.padRatio ?? 0;
  }

  /** `tSec`: capture time of the frame in seconds. Returns pixels, or null when the face is lost. */
  crop(image: ImageDataLike, detected: Box | null, tSec: number): Uint8Array | null {
    if (!detected) {
      this.kalman.reset();
      return null;
    }
    const smoothed = this.kalman.update(detected, tSec);
    return cropFromImageData(image, smoothed, this.padRatio);
  }
}
