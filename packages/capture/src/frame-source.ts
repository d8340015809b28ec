/**
 * Camera frames out of a `<video>`: every presented frame (requestVideoFrameCallback; a timer at
 * the track's rate where it is missing) drawn to a canvas and read back as RGBA, which goes to the
 * tracker's worker (transferred, not copied). This is all the main thread does per frame.
 */

export interface CameraFrame {
  index: number;
  /** Presentation time, seconds (the page's clock). */
  tSec: number;
  width: number;
  height: number;
  /** RGBA pixels, `width * height * 4` bytes. */
  rgba: ArrayBuffer;
}

interface VideoFrameMeta {
  mediaTime: number;
  captureTime?: number;
}
type RvfcVideo = HTMLVideoElement & {
  requestVideoFrameCallback?: (cb: (now: number, meta: VideoFrameMeta) => void) => number;
  cancelVideoFrameCallback?: (id: number) => void;
};

export class FrameSource {
  private readonly canvas: OffscreenCanvas | HTMLCanvasElement;
  private readonly ctx: OffscreenCanvasRenderingContext2D | CanvasRenderingContext2D;
  private index = 0;
  private handle = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = true;
  private lastMediaTime = -1;
  /** Main-thread ms spent drawing and reading frames (docs/benchmarks.md). */
  readMs = 0;
  frames = 0;

  constructor(
    private readonly video: HTMLVideoElement,
    private readonly onFrame: (f: CameraFrame) => void,
  ) {
    const w = video.videoWidth || 640;
    const h = video.videoHeight || 480;
    this.canvas = typeof OffscreenCanvas !== 'undefined' ? new OffscreenCanvas(w, h) : createCanvas(w, h);
    this.ctx = this.canvas.getContext('2d', { willReadFrequently: true }) as CanvasRenderingContext2D;
  }

  start(): void {
    this.stopped = false;
    const v = this.video as RvfcVideo;
    if (v.requestVideoFrameCallback) {
      const tick = (now: number, meta: VideoFrameMeta): void => {
        if (this.stopped) return;
        if (meta.mediaTime !== this.lastMediaTime) {
          this.lastMediaTime = meta.mediaTime;
          this.read(now);
        }
        this.handle = v.requestVideoFrameCallback!(tick);
      };
      this.handle = v.requestVideoFrameCallback(tick);
    } else {
      const fps = this.video.srcObject instanceof MediaStream ? this.trackFps(this.video.srcObject) : 30;
      this.timer = setInterval(() => this.read(performance.now()), 1000 / fps);
    }
  }

  stop(): void {
    this.stopped = true;
    const v = this.video as RvfcVideo;
    if (this.handle && v.cancelVideoFrameCallback) v.cancelVideoFrameCallback(this.handle);
    if (this.timer) clearInterval(this.timer);
  }

  private trackFps(stream: MediaStream): number {
    return stream.getVideoTracks()[0]?.getSettings().frameRate ?? 30;
  }

  private read(nowMs: number): void {
    const t0 = performance.now();
    const w = this.video.videoWidth;
    const h = this.video.videoHeight;
    if (!w || !h) return;
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    this.ctx.drawImage(this.video, 0, 0, w, h);
    const rgba = this.ctx.getImageData(0, 0, w, h).data.buffer as ArrayBuffer;
    this.readMs += performance.now() - t0;
    this.frames++;
    this.onFrame({ index: this.index++, tSec: nowMs / 1000, width: w, height: h, rgba });
  }
}

function createCanvas(w: number, h: number): HTMLCanvasElement {
  const c = document.createElement('canvas');
  c.width = w;
  c.height = h;
  return c;
}
