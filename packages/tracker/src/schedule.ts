/**
 * Detect on a subsample, track in between. Frames wait in a short queue until the next analysed
 * frame; then each waiting frame gets a face box interpolated between the analysed frames on
 * either side (offline, so the future is known), or none when the face is missing on the nearer
 * side. Holds at most one analysis interval of frames (7 frames at 30 fps with 4 Hz analysis).
 */
import type { Box } from '@vitals/protocol';
import type { DetectedFace, TrackerFrame } from './detector.js';

export interface Analysis {
  /** The face followed (the largest), or null. */
  face: DetectedFace | null;
  faceCount: number;
}

export interface ScheduledFrame<F extends TrackerFrame = TrackerFrame> {
  frame: F;
  /** Measured (analysed frame) or interpolated face box; null when the face is lost. */
  box: Box | null;
  /** Present on analysed frames. */
  analysis?: Analysis;
}

export function largestFace(faces: DetectedFace[]): DetectedFace | null {
  let best: DetectedFace | null = null;
  for (const f of faces) if (!best || f.box.width * f.box.height > best.box.width * best.box.height) best = f;
  return best;
}

function lerpBox(a: Box, b: Box, w: number): Box {
  return {
    x: a.x + (b.x - a.x) * w,
    y: a.y + (b.y - a.y) * w,
    width: a.width + (b.width - a.width) * w,
    height: a.height + (b.height - a.height) * w,
  };
}

export class FrameScheduler<F extends TrackerFrame = TrackerFrame> {
  private waiting: F[] = [];
  private prev: { tSec: number; box: Box | null } | null = null;

  /** Frames that are waiting for the next analysis. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Queues a frame that is not analysed. */
  hold(frame: F): void {
    this.waiting.push(frame);
  }

  /** An analysed frame: releases the waiting frames with their boxes, then this one. */
  analysed(frame: F, analysis: Analysis): ScheduledFrame<F>[] {
    const box = analysis.face?.box ?? null;
    const out = this.release({ tSec: frame.tSec, box });
    out.push({ frame, box, analysis });
    this.prev = { tSec: frame.tSec, box };
    return out;
  }

  /** End of stream: waiting frames take the last analysed frame's box. */
  flush(): ScheduledFrame<F>[] {
    return this.release(null);
  }

  private release(next: { tSec: number; box: Box | null } | null): ScheduledFrame<F>[] {
    const out: ScheduledFrame<F>[] = [];
    const prev = this.prev;
    for (const frame of this.waiting) {
      let box: Box | null = null;
      if (prev?.box && next?.box) {
        const span = next.tSec - prev.tSec;
        box = lerpBox(prev.box, next.box, span > 0 ? (frame.tSec - prev.tSec) / span : 0);
      } else {
        const dPrev = prev ? frame.tSec - prev.tSec : Infinity;
        const dNext = next ? next.tSec - frame.tSec : Infinity;
        box = dPrev <= dNext ? (prev?.box ?? null) : (next?.box ?? null);
      }
      out.push({ frame, box });
    }
    this.waiting = [];
    return out;
  }
}
