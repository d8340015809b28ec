/** Messages between the page and the tracker's Web Worker (tracker-worker.ts). */

export interface TrackState {
  widthFraction: number;
  brightness: number;
  motion: number;
}

export type ToTracker =
  /** The verified bundle files (transferred); the worker loads Human from them. */
  | { t: 'init'; files: Record<string, ArrayBuffer> }
  /** A new measurement: a new tracker (fresh detector state). */
  | { t: 'start'; detectBudget: number }
  /** One camera frame, RGBA as read from the canvas (transferred). */
  | { t: 'frame'; index: number; tSec: number; width: number; height: number; rgba: ArrayBuffer }
  | { t: 'finish' };

export type FromTracker =
  | { t: 'ready'; version: string; backend: string; loadMs: number }
  /** After each frame is taken in: the packets it released (wire bytes, transferred) and the face state. */
  | { t: 'out'; index: number; packets: ArrayBuffer[]; current: TrackState | null; frameLuma: number }
  | {
      t: 'finished';
      packets: ArrayBuffer[];
      framesWithFace: number;
      detectMsPerCall: number;
      analysisHz: number;
      /** Worker ms per frame: tracking, detection (averaged), crop and packets. */
      msPerFrame: number;
    }
  | { t: 'error'; message: string };
