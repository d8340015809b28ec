/**
 * Camera frames for the tracker, read back as RGBA and transferred (not copied) to the tracker's
 * worker; this is all the main thread does per frame.
 *
 * Where the browser has `MediaStreamTrackProcessor` (Chromium), every frame the camera delivers is
 * read from the track itself, stamped with its capture timestamp: none is lost because the page
 * did not paint it (under load, `requestVideoFrameCallback` skipped a quarter of the frames in
 * headless Chromium, and those gaps cost the pulse signal its quality). Elsewhere (Safari,
 * Firefox), each presented frame of the `<video>` (requestVideoFrameCallback, or a timer at the
 * track's rate), stamped with the frame's own capture or media time.
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
/** The slice of WebCodecs' VideoFrame used here (a CanvasImageSource). */
interface VideoFrameLike {
  /** Capture timestamp, microseconds. */
  timestamp: number;
  displayWidth: number;
  displayHeight: number;
  codedWidth: number;
  codedHeight: number;
  visibleRect: { x: number; y: number } | null;
  copyTo(
    dest: Uint8Array,
    opts: { format: 'RGBA'; rect: { x: number; y: number; width: number; height: number } },
  ): Promise<unknown>;
  close(): void;
}
type ProcessorCtor = new (init: { track: MediaStreamTrack; maxBufferSize?: number }) => {
  readable: ReadableStream<VideoFrameLike>;
};
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
  private cancelTrack: (() => void) | undefined;
  /** Whether `VideoFrame.copyTo` converts to RGBA here (turned off at its first failure). */
  private copyRgba = true;
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
    const track = v.srcObject instanceof MediaStream ? v.srcObject.getVideoTracks()[0] : undefined;
    const Processor = (globalThis as { MediaStreamTrackProcessor?: ProcessorCtor }).MediaStreamTrackProcessor;
    if (track && Processor) {
      void this.readTrack(new Processor({ track, maxBufferSize: 8 }));
    } else if (v.requestVideoFrameCallback) {
      const tick = (now: number, meta: VideoFrameMeta): void => {
        if (this.stopped) return;
        if (meta.mediaTime !== this.lastMediaTime) {
          this.lastMediaTime = meta.mediaTime;
          // The frame's own timestamp (capture time, else its media time), not the callback's:
          // a busy main thread delays callbacks, and that jitter would land in the pulse signal.
          this.read(meta.captureTime ?? (meta.mediaTime > 0 ? meta.mediaTime * 1000 : now));
        }
        this.handle = v.requestVideoFrameCallback!(tick);
      };
      this.handle = v.requestVideoFrameCallback(tick);
    } else {
      const fps = this.video.srcObject instanceof MediaStream ? this.trackFps(this.video.srcObject) : 30;
      this.timer = setInterval(() => this.read(performance.now()), 1000 / fps);
    }
  }

  /** Every frame of the camera track (Chromium's breakout box), until stopped. */
  private async readTrack(p: { readable: ReadableStream<VideoFrameLike> }): Promise<void> {
    const reader = p.readable.getReader();
    this.cancelTrack = () => void reader.cancel().catch(() => undefined);
    try {
      for (;;) {
        const { value: frame, done } = await reader.read();
        if (done || !frame) return;
        try {
          if (!this.stopped) {
            if (this.copyRgba) await this.copy(frame);
            else this.read(frame.timestamp / 1000, frame);
          }
        } finally {
          frame.close();
        }
        if (this.stopped) return;
      }
    } catch {
      // the track ended or the reader was cancelled
    } finally {
      reader.releaseLock();
    }
  }

  stop(): void {
    this.cancelTrack?.();
    this.cancelTrack = undefined;
    this.stopped = true;
    const v = this.video as RvfcVideo;
    if (this.handle && v.cancelVideoFrameCallback) v.cancelVideoFrameCallback(this.handle);
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * A frame's RGBA by WebCodecs' own conversion (`copyTo` with `format: 'RGBA'`; about a sixth of
   * drawing it to a canvas and reading it back); the canvas where the browser cannot convert.
   */
  private async copy(frame: VideoFrameLike): Promise<void> {
    const t0 = performance.now();
    const w = frame.displayWidth;
    const h = frame.displayHeight;
    const full = { x: 0, y: 0, width: w, height: h };
    if (frame.codedWidth !== w || frame.codedHeight !== h || frame.visibleRect?.x || frame.visibleRect?.y) {
      this.copyRgba = false;
      return this.read(frame.timestamp / 1000, frame);
    }
    try {
      const buf = new Uint8Array(w * h * 4);
      await frame.copyTo(buf, { format: 'RGBA', rect: full });
      this.readMs += performance.now() - t0;
      this.frames++;
      this.onFrame({ index: this.index++, tSec: frame.timestamp / 1e6, width: w, height: h, rgba: buf.buffer });
    } catch {
      this.copyRgba = false;
      this.read(frame.timestamp / 1000, frame);
    }
  }

  private trackFps(stream: MediaStream): number {
    return stream.getVideoTracks()[0]?.getSettings().frameRate ?? 30;
  }

  private read(nowMs: number, frame?: VideoFrameLike): void {
    const t0 = performance.now();
    const w = frame ? frame.displayWidth : this.video.videoWidth;
    const h = frame ? frame.displayHeight : this.video.videoHeight;
    if (!w || !h) return;
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    this.ctx.drawImage((frame as unknown as CanvasImageSource) ?? this.video, 0, 0, w, h);
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
