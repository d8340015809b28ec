/**
 * The camera, with failures named so the page can say what to do (issue 15 §3): denied, missing,
 * busy (another app holds it), or no camera API at all (an insecure page: http on a non-local host).
 */

export type CameraErrorCode = 'camera_denied' | 'camera_missing' | 'camera_busy' | 'camera_unsupported';

export const CAMERA_MESSAGES: Readonly<Record<CameraErrorCode, string>> = Object.freeze({
  camera_denied: 'Camera access was denied. Allow the camera for this page in the browser settings, then try again.',
  camera_missing: 'No camera was found. Connect a camera and try again.',
  camera_busy: 'The camera is in use by another app or tab. Close it there and try again.',
  camera_unsupported: 'This page cannot use a camera here (it needs https or localhost, and a current browser).',
});

export class CameraError extends Error {
  constructor(
    readonly code: CameraErrorCode,
    override readonly cause?: unknown,
  ) {
    super(CAMERA_MESSAGES[code]);
    this.name = 'CameraError';
  }
}

/** getUserMedia's DOMException names to our codes. */
export function cameraErrorCode(err: unknown): CameraErrorCode {
  const name = (err as { name?: string } | null)?.name ?? '';
  if (name === 'NotAllowedError' || name === 'SecurityError' || name === 'PermissionDeniedError')
    return 'camera_denied';
  if (name === 'NotFoundError' || name === 'OverconstrainedError' || name === 'DevicesNotFoundError')
    return 'camera_missing';
  if (name === 'NotReadableError' || name === 'AbortError' || name === 'TrackStartError') return 'camera_busy';
  if (name === 'TypeError') return 'camera_unsupported';
  return 'camera_busy';
}

/** The front camera at about 640x480 and 30 fps (the crop needs no more; more costs detection time). */
export async function openCamera(
  constraints: MediaTrackConstraints = {
    facingMode: 'user',
    width: { ideal: 640 },
    height: { ideal: 480 },
    frameRate: { ideal: 30 },
  },
): Promise<MediaStream> {
  const md = globalThis.navigator?.mediaDevices;
  if (!md?.getUserMedia) throw new CameraError('camera_unsupported');
  try {
    return await md.getUserMedia({ video: constraints, audio: false });
  } catch (err) {
    throw new CameraError(cameraErrorCode(err), err);
  }
}
