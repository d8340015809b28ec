/**
 * One face tracker, two frame sources (issue 15 §2): the video pipeline feeds it decoded frames
 * from ffmpeg, the browser capture frames from the camera. Each frame goes in with `push`; every
 * `1/analysisHz` s a frame is analysed by the detector (a full detection every `redetectSec` and
 * whenever the face was lost, mesh tracking otherwise), frames in between wait at most one analysis
 * interval and get a box interpolated between the analysed frames on either side; then the
 * packetizer crops (Kalman, protocol crop rule) and emits type 1/2/3 (and 4 with an aux encoder).
 *
 * The tracker owns its detector for its lifetime: no state is shared with any other tracker.
 */
import type { Box, BoxKalmanOptions, Packet } from '@vitals/protocol';
import type { AuxEncoder } from './aux-crop.js';
import type { FaceDetector, TrackerFrame } from './detector.js';
import { Packetizer } from './packetizer.js';
import { FrameScheduler, largestFace, type ScheduledFrame } from './schedule.js';

export interface TrackerOptions<F extends TrackerFrame = TrackerFrame> {
  detector: FaceDetector;
  /** Landmark analyses per second (other frames are interpolated). Default 4. */
  analysisHz?: number;
  /** Seconds between full detections (BlazeFace); in between FaceMesh tracks. Default 2. */
  redetectSec?: number;
  /**
   * Slower rates while the face is steady (its box moved and resized by at most `STEADY_SHIFT`
   * face widths since the previous analysis); `analysisHz` and `redetectSec` again as soon as it
   * moves or is lost. Default: none (no adaptation). The video pipeline's fast settings use STEADY_VIDEO.
   */
  steady?: SteadyRates;
  /** Expected frame rate (the analysis stride's half-frame slack). Default 30. */
  nominalFps?: number;
  /** Source pixels per frame pixel (1 unless the frames were scaled down). */
  scaleBack?: number;
  /** Tuning of the crop's Kalman smoother (the protocol's defaults otherwise). */
  kalman?: BoxKalmanOptions;
  /** Evaluation only: PacketizerOptions.cropBox. */
  cropBox?: (box: Box) => Box;
  /** Type-4 aux JPEG encoder (emotion or gaze ordered); none by default. */
  aux?: AuxEncoder | null;
  /** Each packet as it is made (live capture). */
  onPacket?: (p: Packet) => void;
  /** Keep every packet for `finish` (default true). */
  keep?: boolean;
  /** Keep the type-1 crops for `finish` (default true; PacketizerOptions.keepCrops). */
  keepCrops?: boolean;
  /** Called when the tracker is done with a frame (its buffer may be reused). */
  onFrameDone?: (frame: F) => void;
  /** Each analysed frame's outcome (guidance: faces seen, detector time). */
  onAnalysed?: (a: { frame: F; faceCount: number; ms: number; fresh: boolean }) => void;
}

export interface SteadyRates {
  /** Analyses per second while steady (at most `analysisHz`). */
  analysisHz: number;
  /** Seconds between full detections while steady (at least `redetectSec`). */
  redetectSec: number;
}

/** The video pipeline's steady rates: half the analyses, full detections twice as far apart. */
export const STEADY_VIDEO: SteadyRates = { analysisHz: 2, redetectSec: 4 };

export class FaceTracker<F extends TrackerFrame = TrackerFrame> {
  readonly packetizer: Packetizer;
  private readonly scheduler = new FrameScheduler<F>();
  private analysisPeriod: number;
  private readonly steadyRates: SteadyRates | null;
  private readonly redetectSec: number;
  private readonly slack: number;
  private nextAnalysis = -Infinity;
  private lastFresh = -Infinity;
  private lastFaceSeen = false;
  private lastBox: Box | null = null;
  private steadyNow = false;

  constructor(private readonly opts: TrackerOptions<F>) {
    this.analysisPeriod = 1 / (opts.analysisHz ?? 4);
    this.redetectSec = opts.redetectSec ?? 2;
    this.steadyRates = opts.steady ?? null;
    // Half a frame of slack so the analysed frames keep a steady stride (30 fps at 4 Hz: 7 or 8).
    this.slack = 0.5 / (opts.nominalFps ?? 30);
    this.packetizer = new Packetizer({
      aux: opts.aux ?? null,
      scaleBack: opts.scaleBack ?? 1,
      kalman: opts.kalman,
      cropBox: opts.cropBox,
      onPacket: opts.onPacket,
      keep: opts.keep,
      keepCrops: opts.keepCrops,
    });
  }

  /** Changes the analysis rate from the next analysis on (a live source's detection budget). */
  setAnalysisHz(hz: number): void {
    this.analysisPeriod = 1 / hz;
  }

  get analysisHz(): number {
    return 1 / this.analysisPeriod;
  }

  /** Frames waiting for the next analysis. */
  get queued(): number {
    return this.scheduler.queued;
  }

  /** Whether a frame at `tSec` pushed next would be analysed (a live source may time its detection budget). */
  wouldAnalyse(tSec: number): boolean {
    return tSec >= this.nextAnalysis - this.slack;
  }

  /** One frame in, in presentation order. Resolves once it is analysed or queued. */
  async push(frame: F): Promise<void> {
    if (!this.wouldAnalyse(frame.tSec)) {
      this.scheduler.hold(frame);
      return;
    }
    const steady = this.steadyNow ? this.steadyRates : null;
    const redetectSec = steady ? Math.max(steady.redetectSec, this.redetectSec) : this.redetectSec;
    const fresh = frame.tSec >= this.lastFresh + redetectSec || !this.lastFaceSeen;
    const t0 = now();
    if (!this.opts.detector.preparesFrames) frame.prepareRegion?.(null);
    const faces = await this.opts.detector.detect(frame, { fresh });
    if (fresh) this.lastFresh = frame.tSec;
    const face = largestFace(faces);
    this.steadyNow =
      this.steadyRates !== null && face !== null && this.lastBox !== null && isSteady(this.lastBox, face.box);
    const period = this.steadyNow
      ? Math.max(1 / this.steadyRates!.analysisHz, this.analysisPeriod)
      : this.analysisPeriod;
    this.nextAnalysis = frame.tSec + period;
    this.lastFaceSeen = face !== null;
    this.lastBox = face?.box ?? null;
    this.opts.onAnalysed?.({ frame, faceCount: faces.length, ms: now() - t0, fresh });
    this.emit(this.scheduler.analysed(frame, { face, faceCount: faces.length }));
  }

  /** End of the source: the waiting frames take the last analysed box; every packet in time order. */
  async finish(): Promise<Packet[]> {
    this.emit(this.scheduler.flush());
    return this.packetizer.finish();
  }

  /** Gives the detector back (a leased Human instance). */
  release(): void {
    this.opts.detector.release?.();
  }

  private emit(list: ScheduledFrame<F>[]): void {
    for (const s of list) {
      this.packetizer.push(s);
      this.opts.onFrameDone?.(s.frame);
    }
  }
}

/**
 * Largest move of the box centre, and change of its width or height, between two analyses that
 * still counts as steady, in face widths. Mesh boxes of a still face jitter by about 0.01-0.02
 * face widths; the crop's Kalman filter assumes 0.03 of measurement noise (docs/media.md).
 */
export const STEADY_SHIFT = 0.04;

function isSteady(a: Box, b: Box): boolean {
  const w = Math.max(1, a.width);
  const dx = b.x + b.width / 2 - (a.x + a.width / 2);
  const dy = b.y + b.height / 2 - (a.y + a.height / 2);
  return (
    Math.hypot(dx, dy) <= STEADY_SHIFT * w &&
    Math.abs(b.width - a.width) <= STEADY_SHIFT * w &&
    Math.abs(b.height - a.height) <= STEADY_SHIFT * w
  );
}

/** A monotonic clock in Node and the browser alike (the tracker has no platform types). */
const perf = (globalThis as { performance?: { now(): number } }).performance;
const now = (): number => (perf ? perf.now() : Date.now());
