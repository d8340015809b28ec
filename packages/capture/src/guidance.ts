/**
 * Guidance while measuring (issue 15 §3): stable codes a page can branch on, with plain words for
 * people. Evaluated on what the tracker measures (face box, crop brightness, motion) and on the
 * camera's delivered frame rate; a hint is raised after it holds for `holdSec` and cleared after
 * it has been gone as long, so a single odd frame does not flicker a message.
 */

export type GuidanceCode = 'no_face' | 'face_too_small' | 'too_dark' | 'too_bright' | 'moving' | 'low_frame_rate';

/** Plain-word messages shown by `<vitals-measure>` (a page may show its own per code). */
export const GUIDANCE_MESSAGES: Readonly<Record<GuidanceCode, string>> = Object.freeze({
  no_face: 'We cannot see a face. Look straight at the camera.',
  face_too_small: 'Move closer: your face is too small or too far away.',
  too_dark: 'It is too dark. Turn on a light in front of you.',
  too_bright: 'It is too bright. Move away from direct light behind or on you.',
  moving: 'Hold still for a moment.',
  low_frame_rate: 'The camera is too slow. Close other apps or tabs using it.',
});

/** Thresholds (documented in docs/capture.md; spec: face crops at >= 20 fps, face width rule). */
export const GUIDANCE_LIMITS = Object.freeze({
  /** Face box width under this share of the frame width: too small or too far. */
  minFaceWidthFraction: 0.15,
  /** Mean BT.601 luma of the crop (0..1) under this: too dark. */
  minBrightness: 0.2,
  /** Over this: too bright (skin saturates and the pulse is clipped). */
  maxBrightness: 0.85,
  /** Motion score (0..1, 1 = half a face width per second) over this: moving. */
  maxMotion: 0.35,
  /** Camera frames per second under this: too slow (the batch rules reject under 20). */
  minFps: 20,
});

export interface GuidanceSample {
  /** Seconds since the capture started. */
  tSec: number;
  /** Whether the tracker has a face on this frame. */
  face: boolean;
  widthFraction?: number;
  /** Crop luma 0..1; for a frame without a face, the whole frame's. */
  brightness?: number;
  motion?: number;
  /** Delivered camera frame rate over the last second (NaN before one second). */
  fps: number;
}

export interface GuidanceChange {
  /** The codes active now, most important first. */
  active: GuidanceCode[];
  raised: GuidanceCode[];
  cleared: GuidanceCode[];
}

/** Order of importance: the first active code is the one a single-line UI shows. */
const ORDER: GuidanceCode[] = ['no_face', 'too_dark', 'too_bright', 'face_too_small', 'moving', 'low_frame_rate'];

export function conditions(s: GuidanceSample, limits = GUIDANCE_LIMITS): Set<GuidanceCode> {
  const out = new Set<GuidanceCode>();
  if (s.brightness !== undefined && s.brightness < limits.minBrightness) out.add('too_dark');
  else if (!s.face) out.add('no_face');
  if (s.face) {
    if (s.brightness !== undefined && s.brightness > limits.maxBrightness) out.add('too_bright');
    if (s.widthFraction !== undefined && s.widthFraction < limits.minFaceWidthFraction) out.add('face_too_small');
    if (s.motion !== undefined && s.motion > limits.maxMotion) out.add('moving');
  }
  if (Number.isFinite(s.fps) && s.fps < limits.minFps) out.add('low_frame_rate');
  return out;
}

/** Debounces conditions into raised / cleared hints. */
export class Guidance {
  private readonly since = new Map<GuidanceCode, number>();
  private readonly goneSince = new Map<GuidanceCode, number>();
  private readonly activeSet = new Set<GuidanceCode>();

  constructor(
    private readonly holdSec = 0.5,
    private readonly limits = GUIDANCE_LIMITS,
  ) {}

  get active(): GuidanceCode[] {
    return ORDER.filter((c) => this.activeSet.has(c));
  }

  /** One sample; returns a change when a hint was raised or cleared, else null. */
  update(s: GuidanceSample): GuidanceChange | null {
    const now = conditions(s, this.limits);
    const raised: GuidanceCode[] = [];
    const cleared: GuidanceCode[] = [];
    for (const code of ORDER) {
      if (now.has(code)) {
        this.goneSince.delete(code);
        if (!this.since.has(code)) this.since.set(code, s.tSec);
        if (!this.activeSet.has(code) && s.tSec - this.since.get(code)! >= this.holdSec) {
          this.activeSet.add(code);
          raised.push(code);
        }
      } else {
        this.since.delete(code);
        if (!this.activeSet.has(code)) continue;
        if (!this.goneSince.has(code)) this.goneSince.set(code, s.tSec);
        if (s.tSec - this.goneSince.get(code)! >= this.holdSec) {
          this.activeSet.delete(code);
          this.goneSince.delete(code);
          cleared.push(code);
        }
      }
    }
    return raised.length || cleared.length ? { active: this.active, raised, cleared } : null;
  }
}
