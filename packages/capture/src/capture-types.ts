/** The public shapes of `VitalsCapture` (capture.ts): its events, options and outcome. */
import type { EngineEvent, EngineMeasurement } from '@vitals/engine';
import type { FinalEvent, StreamSession } from '@vitals/sdk';
import type { ModelGrant } from './bundle.js';
import type { GuidanceCode } from './guidance.js';
import type { WavePoint } from './on-device.js';
import type { OnDeviceResult } from './result.js';

export type CaptureMode = 'on-device' | 'cloud';

export interface CaptureEvents {
  state: { state: 'preparing' | 'ready' | 'measuring' | 'finishing' | 'done' | 'failed' };
  guidance: { code: GuidanceCode | null; active: GuidanceCode[]; message: string | null };
  progress: { fraction: number; elapsedSec: number; durationSec: number };
  hr: { hr: number; sqi: number; tMs: number };
  wave: WavePoint;
  engine: EngineEvent;
  /** Each packet the tracker made (wire bytes; `type` is its first byte). */
  packet: { type: number; bytes: Uint8Array };
}

export interface CaptureOutcome {
  mode: CaptureMode;
  /** On the device: the `POST /sdk/v1/measurements` body for the page's backend. */
  result?: OnDeviceResult;
  /** On the device: the engine's own measurement (diagnostics). */
  measurement?: EngineMeasurement;
  /** Cloud: the session's `final` (its `measurement` is the stored one). */
  final?: FinalEvent;
  /** The frames file of the capture, when `keepFramesFile` was set. */
  framesFile?: Uint8Array;
  stats: CaptureStats;
}

export interface CaptureStats {
  framesRead: number;
  framesWithFace: number;
  framesDropped: number;
  /** Main-thread ms per camera frame: drawing it and reading its pixels back. */
  mainMsPerFrame: number;
  /** Tracker-worker ms per frame: RGB conversion, tracking, detection (averaged), crop, packets. */
  trackerMsPerFrame: number;
  /** Detector ms per analysis. */
  detectMsPerCall: number;
  /** Engine ms per face crop in the worker (on the device). */
  workerMsPerFrame?: number;
  /** ms from the page's time origin (navigation start) to the first face crop. */
  firstCropMs?: number;
  analysisHz: number;
  /** Seconds the camera ran (since it was opened) before the capture's first frame: the start it skipped. */
  cameraLeadSec?: number;
  /**
   * Frames the camera itself produced during the capture, and of those the ones the browser
   * discarded before the page read them (`MediaStreamTrack.stats`, Chromium; absent elsewhere).
   * Against `framesRead`: a camera that produced fewer is slow, a page that read fewer lost frames.
   */
  cameraFrames?: number;
  cameraFramesDiscarded?: number;
  bundleTransferBytes: number;
  humanLoadMs: number;
}

export interface CaptureOptions {
  /** The preview element; gets `playsinline`, `muted` and the camera stream. */
  video: HTMLVideoElement;
  /** The grant (or how to get one: the page's backend mints it with the key). */
  grant: ModelGrant | (() => Promise<ModelGrant>);
  /** A stream to use instead of opening the front camera. */
  stream?: MediaStream;
  /** URL of estimator-worker.js; default beside this module. */
  workerUrl?: string | URL;
  /** URL of tracker-worker.js; default beside this module. */
  trackerWorkerUrl?: string | URL;
  /** Share of wall-clock time detection may take before the analysis rate steps down. Default 0.35. */
  detectBudget?: number;
}

export interface RunOptions {
  mode: CaptureMode;
  durationSec: number;
  /** Cloud: a started or idle `StreamSession` (any delivery mode); it is started if idle. */
  session?: StreamSession;
  /** Also keep the capture as a frames file (both modes). */
  keepFramesFile?: boolean;
  signal?: AbortSignal;
}
