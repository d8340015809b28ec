/**
 * What a client must send (spec: Session `frameSpec`; its fields beyond `padRatio` are not shown
 * and designed here, docs/streaming.md). Read from the session response, never hard-coded by clients.
 */
import {
  AUX_SIZE,
  CROP_SIZE,
  FACE_CROP_PACKET_BYTES,
  PROTOCOL_VERSION,
  STREAM_MAX_FPS,
  WS_MAX_MESSAGE_BYTES,
} from '@vitals/protocol';

export const FRAME_SPEC = Object.freeze({
  protocol: PROTOCOL_VERSION,
  width: CROP_SIZE,
  height: CROP_SIZE,
  channels: 3,
  layout: 'NHWC',
  pixelFormat: 'rgb24',
  /** The pulse crop is the face box itself, no padding (spec: Type 1 crop rule). */
  padRatio: 0,
  boxSmoothing: 'kalman',
  resize: 'area',
  packetBytes: FACE_CROP_PACKET_BYTES,
  targetFps: 30,
  maxFps: STREAM_MAX_FPS,
  maxMessageBytes: WS_MAX_MESSAGE_BYTES,
  aux: { width: AUX_SIZE, height: AUX_SIZE, format: 'jpeg', jpegQuality: [70, 85], rateHz: 2 },
  note: 'Smooth the face box with a Kalman filter, crop it without padding, area-resize to 36x36 RGB; send no frame while the face is lost.',
});
