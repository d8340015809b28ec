/**
 * Scheduled frames → protocol packets. Type 1 for every frame with a face (the spec's crop rule:
 * Kalman-smoothed box, no padding, 36x36 RGB); type 3 on analysed frames (landmarks); type 2 and,
 * when asked, type 4 at 2 Hz. No packet at all while the face is lost.
 */
import {
  BoxKalman,
  cropResizeRgb,
  decodePacket,
  encodeAuxChunks,
  meanLuma,
  quantizeTelemetry,
  type Box,
  type BoxKalmanOptions,
  type Packet,
} from '@vitals/protocol';
import { auxRgb, auxSquare, type AuxEncoder } from './aux-crop.js';
import { faceTelemetry } from './landmarks.js';
import type { ScheduledFrame } from './schedule.js';

/** Type-2 and type-4 rate (spec: up to 2 Hz). */
const SIDE_PERIOD_SEC = 0.5;
/** Motion score 1 means the face moves half its width per second or faster. */
const MOTION_FULL_SCALE = 0.5;
/** Time constant of the motion average, seconds. */
const MOTION_TAU_SEC = 0.5;

export interface PacketizerOptions {
  /** Encoder of aux crops; none when aux was not asked for. */
  aux: AuxEncoder | null;
  /** Source pixels per decoded pixel (1 unless ffmpeg scaled a large video down). */
  scaleBack: number;
  kalman?: BoxKalmanOptions;
  /** Called with each type 1/2/3 packet as it is made (live capture); they are kept in `packets` too unless `keep` is false. */
  onPacket?: (p: Packet) => void;
  /** Keep packets in `packets` (default true; a live capture that streams them may not need them). */
  keep?: boolean;
  /**
   * Keep the type-1 face crops in `packets` (default true). false: only `onPacket` sees them, and
   * `finish` returns the other packets (a long video's crops are most of its memory, 3.9 KB a frame).
   */
  keepCrops?: boolean;
  /**
   * Evaluation only: maps the smoothed box to the box that is cropped (type-1 pixels, and the
   * quality packet's brightness, which is the crop's; motion and face width keep the smoothed box).
   * scripts/eval/box-sensitivity.ts measures how results move under boxes a pixel or a per cent
   * off. No product path sets it.
   */
  cropBox?: (box: Box) => Box;
}

export class Packetizer {
  readonly packets: Packet[] = [];
  framesDecoded = 0;
  framesWithFace = 0;
  readonly faceWidthsPx: number[] = [];
  analysed = 0;
  analysedWithSeveral = 0;
  maxFacesSeen = 0;

  private readonly kalman: BoxKalman;
  private t0 = NaN;
  private last: { t: number; box: Box } | null = null;
  private motion = 0;
  private nextSide = 0;
  private nextAux = 0;
  private readonly auxJobs: { tMicros: number; jpeg: Promise<Uint8Array> }[] = [];

  constructor(private readonly opts: PacketizerOptions) {
    this.kalman = new BoxKalman(opts.kalman);
  }

  /** The latest smoothed box with the frame's brightness and size (guidance); null while the face is lost. */
  get current(): { box: Box; brightness: number; widthFraction: number; motion: number } | null {
    return this.now;
  }

  private now: { box: Box; brightness: number; widthFraction: number; motion: number } | null = null;

  push(s: ScheduledFrame): void {
    const { frame } = s;
    if (Number.isNaN(this.t0)) this.t0 = frame.tSec;
    this.framesDecoded++;
    if (s.analysis) {
      this.analysed++;
      if (s.analysis.faceCount >= 2) this.analysedWithSeveral++;
      this.maxFacesSeen = Math.max(this.maxFacesSeen, s.analysis.faceCount);
    }
    if (!s.box) {
      this.kalman.reset();
      this.last = null;
      this.now = null;
      return;
    }
    const t = frame.tSec - this.t0;
    const tMicros = Math.max(0, Math.round(t * 1e6));
    const box = this.kalman.update(s.box, frame.tSec);
    this.framesWithFace++;
    this.faceWidthsPx.push(s.box.width * this.opts.scaleBack);
    this.updateMotion(t, box);

    const cropped = this.opts.cropBox ? this.opts.cropBox(box) : box;
    let pixels = frame.cropRgb?.(cropped) ?? null;
    if (pixels === null) {
      frame.prepareRegion?.(cropped);
      pixels = cropResizeRgb(frame.data, frame.width, frame.height, cropped, undefined, undefined, frame.channels ?? 3);
    }
    const brightness = meanLuma(pixels);
    this.out({ type: 1, seq: frame.index, tMicros, flags: 0, pixels });

    const widthFraction = Math.min(1, box.width / frame.width);
    this.now = { box, brightness, widthFraction, motion: this.motion };
    const tele = s.analysis?.face ? faceTelemetry(s.analysis.face) : null;
    if (tele) {
      const slots = quantizeTelemetry({
        ...tele,
        faceWidthFraction: widthFraction,
        meanBrightness: brightness,
        motionScore: this.motion,
      });
      this.out({ type: 3, tMicros, slots });
    }
    if (t >= this.nextSide) {
      this.nextSide = t + SIDE_PERIOD_SEC - 0.01;
      this.out({
        type: 2,
        tMicros,
        faceWidthRatio: widthFraction,
        meanBrightness: brightness,
        motionScore: this.motion,
      });
    }
    if (this.opts.aux && t >= this.nextAux) {
      this.nextAux = t + SIDE_PERIOD_SEC - 0.01;
      frame.prepareRegion?.(auxSquare(box));
      this.auxJobs.push({ tMicros, jpeg: this.opts.aux.encode(auxRgb(frame, box)) });
    }
  }

  private out(p: Packet): void {
    if (this.opts.keep !== false && (p.type !== 1 || this.opts.keepCrops !== false)) this.packets.push(p);
    this.opts.onPacket?.(p);
  }

  /** All packets in time order, aux chunks (encoded in the background) merged in. */
  async finish(): Promise<Packet[]> {
    if (!this.opts.aux) return this.packets;
    await this.opts.aux.finish();
    const aux: Packet[] = [];
    for (const job of this.auxJobs) {
      for (const chunk of encodeAuxChunks({ tMicros: job.tMicros, jpeg: await job.jpeg }))
        aux.push(decodePacket(chunk) as Packet);
    }
    const merged: Packet[] = [];
    let j = 0;
    for (const p of this.packets) {
      while (j < aux.length && aux[j].tMicros < p.tMicros) merged.push(aux[j++]);
      merged.push(p);
    }
    while (j < aux.length) merged.push(aux[j++]);
    return merged;
  }

  private updateMotion(t: number, box: Box): void {
    if (this.last) {
      const dt = t - this.last.t;
      if (dt > 0) {
        const dx = box.x + box.width / 2 - (this.last.box.x + this.last.box.width / 2);
        const dy = box.y + box.height / 2 - (this.last.box.y + this.last.box.height / 2);
        const speed = Math.hypot(dx, dy) / Math.max(1, box.width) / dt;
        const a = 1 - Math.exp(-dt / MOTION_TAU_SEC);
        const score = Math.min(1, speed / MOTION_FULL_SCALE);
        this.motion += a * (score - this.motion);
      }
    }
    this.last = { t, box };
  }
}
