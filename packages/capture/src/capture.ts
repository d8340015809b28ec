/**
 * `VitalsCapture`: a camera in the page to type 1/2/3 packets at the camera's rate (the same
 * tracker as the video pipeline: @vitals/tracker), with guidance and progress, and the packets
 * delivered on the device (the engine in a Web Worker) or to the cloud (`StreamSession`, any
 * delivery mode), optionally also kept as a frames file.
 *
 * Threads: the main thread only draws each camera frame and hands its pixels to the tracker's
 * worker (tracker-worker.ts: Human + the tracker, detection on a budget: 4 analyses a second,
 * stepping down to 2 when the detector would take more than `detectBudget` of the wall clock); the
 * packets come back and go to the estimator's worker (on the device), the `StreamSession` (cloud)
 * and the frames file. A backlog over 1.5 s of frames drops new frames rather than growing.
 */
import { FramesWriter, SDK_VERSION } from '@vitals/sdk';
import { loadBundle, type LoadedBundle } from './bundle.js';
import { CameraError, openCamera } from './camera.js';
import type {
  CaptureEvents,
  CaptureMode,
  CaptureOptions,
  CaptureOutcome,
  CaptureStats,
  RunOptions,
} from './capture-types.js';
import { cameraCounts, nextMessage, type TrackerWorker, type TrackStats } from './capture-workers.js';
import { Emitter } from './emitter.js';
import { FrameSource, type CameraFrame } from './frame-source.js';
import { Guidance, GUIDANCE_MESSAGES } from './guidance.js';
import type { FromTracker, ToTracker } from './tracker-protocol.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

export type {
  CaptureEvents,
  CaptureMode,
  CaptureOptions,
  CaptureOutcome,
  CaptureStats,
  RunOptions,
} from './capture-types.js';

export class VitalsCapture extends Emitter<CaptureEvents> {
  private bundle: LoadedBundle | null = null;
  private tracker: TrackerWorker | null = null;
  private stream: MediaStream | null = null;
  private worker: Worker | null = null;
  private cameraOpenedAt = NaN;

  constructor(private readonly opts: CaptureOptions) {
    super();
  }

  get modelsVersion(): string | undefined {
    return this.bundle?.modelsVersion;
  }

  /** Camera, model bundle, detector and (on the device) the estimator. Throws CameraError or BundleError. */
  async prepare(mode: CaptureMode): Promise<void> {
    this.emit('state', { state: 'preparing' });
    const v = this.opts.video;
    v.muted = true;
    v.playsInline = true;
    v.setAttribute('playsinline', '');
    v.autoplay = true;
    const camera = (async () => {
      if (this.stream) return;
      this.stream = this.opts.stream ?? (await openCamera());
      this.cameraOpenedAt = performance.now();
      v.srcObject = this.stream;
      await v.play().catch(() => undefined);
      if (!v.videoWidth) await new Promise((r) => v.addEventListener('loadeddata', r, { once: true }));
    })();
    const models = (async () => {
      if (this.tracker) return;
      const grant = typeof this.opts.grant === 'function' ? await this.opts.grant() : this.opts.grant;
      this.bundle = await loadBundle(grant);
      this.tracker = await this.startTracker(this.bundle);
    })();
    const results = await Promise.allSettled([camera, models]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
    if (mode === 'on-device') this.worker ??= await this.startEstimator();
    this.emit('state', { state: 'ready' });
  }

  /** One measurement; resolves when it is complete (or rejects: aborted, failed). */
  async run(run: RunOptions): Promise<CaptureOutcome> {
    if (!this.tracker || !this.bundle || !this.stream) throw new Error('prepare() first');
    if (run.mode === 'on-device' && !this.worker) this.worker = await this.startEstimator();
    const tw = this.tracker;
    const bundle = this.bundle;
    const writer = run.keepFramesFile ? new FramesWriter() : null;
    const session = run.mode === 'cloud' ? run.session : undefined;
    if (run.mode === 'cloud' && !session) throw new Error('cloud mode needs a StreamSession');
    if (session && session.state === 'idle') await session.start();
    const offSession = session?.on('hr', (e) => this.emit('hr', { hr: e.hr, sqi: e.sqi, tMs: e.tMs }));

    let firstCropMs: number | undefined;
    const deliver = (list: ArrayBuffer[]): void => {
      const toEstimator: ArrayBuffer[] = [];
      for (const buf of list) {
        const bytes = new Uint8Array(buf);
        if (bytes[0] === 1 && firstCropMs === undefined) firstCropMs = performance.now();
        writer?.addPacket(bytes);
        session?.sendPacket(bytes);
        if (run.mode === 'on-device') toEstimator.push(buf);
        this.emit('packet', { type: bytes[0], bytes });
      }
      if (toEstimator.length)
        this.worker?.postMessage({ t: 'packets', list: toEstimator } satisfies ToWorker, toEstimator);
    };

    const guidance = new Guidance();
    const fpsWindow: number[] = [];
    const started = new Map<number, number>();
    let t0 = NaN;
    let cameraLeadSec: number | undefined;
    const track = this.stream.getVideoTracks()[0] as (MediaStreamTrack & { stats?: TrackStats }) | undefined;
    // Platform attributes live on the prototype: copied field by field.
    const snap = (): TrackStats | undefined =>
      track?.stats ? { totalFrames: track.stats.totalFrames, discardedFrames: track.stats.discardedFrames } : undefined;
    let statsAtStart: TrackStats | undefined;
    let statsAtEnd: TrackStats | undefined;
    let lastProgress = -1;
    let dropped = 0;
    let inFlight = 0;
    let ended = false;
    let resolveEnd!: () => void;
    const endOfCapture = new Promise<void>((r) => (resolveEnd = r));

    const onOut = (e: MessageEvent<FromTracker>): void => {
      const m = e.data;
      if (m.t !== 'out') return;
      inFlight--;
      deliver(m.packets);
      const elapsed = (started.get(m.index) ?? t0) - t0;
      started.delete(m.index);
      const cur = m.current;
      const change = guidance.update({
        tSec: elapsed,
        face: cur !== null,
        widthFraction: cur?.widthFraction,
        brightness: cur ? cur.brightness : m.frameLuma,
        motion: cur?.motion,
        fps: elapsed >= 1.5 ? fpsWindow.length : NaN,
      });
      if (change) {
        const code = change.active[0] ?? null;
        this.emit('guidance', { code, active: change.active, message: code ? GUIDANCE_MESSAGES[code] : null });
      }
      const fraction = Math.min(1, elapsed / run.durationSec);
      if (fraction - lastProgress >= 0.01) {
        lastProgress = fraction;
        this.emit('progress', { fraction, elapsedSec: elapsed, durationSec: run.durationSec });
      }
    };
    const onFrame = (f: CameraFrame): void => {
      if (ended) return;
      if (Number.isNaN(t0)) {
        t0 = f.tSec;
        cameraLeadSec = (performance.now() - this.cameraOpenedAt) / 1000;
        statsAtStart = snap();
      }
      if (f.tSec - t0 >= run.durationSec) {
        statsAtEnd = snap();
        ended = true;
        resolveEnd();
        return;
      }
      fpsWindow.push(f.tSec);
      while (fpsWindow.length && fpsWindow[0] < f.tSec - 1) fpsWindow.shift();
      if (inFlight > 45) {
        dropped++;
        return;
      }
      inFlight++;
      started.set(f.index, f.tSec);
      const msg: ToTracker = { t: 'frame', ...f };
      tw.worker.postMessage(msg, [f.rgba]);
    };
    const source = new FrameSource(this.opts.video, onFrame);
    const onAbort = (): void => {
      ended = true;
      resolveEnd();
    };
    run.signal?.addEventListener('abort', onAbort, { once: true });

    tw.worker.addEventListener('message', onOut);
    const offEstimator = this.worker ? this.listenEstimator() : () => undefined;
    tw.worker.postMessage({ t: 'start', detectBudget: this.opts.detectBudget ?? 0.35 } satisfies ToTracker);
    this.emit('state', { state: 'measuring' });
    source.start();
    try {
      await endOfCapture;
      source.stop();
      run.signal?.throwIfAborted();
      const finished = nextMessage(tw.worker, (d) => (d.t === 'finished' ? d : undefined));
      tw.worker.postMessage({ t: 'finish' } satisfies ToTracker);
      const fin = await finished;
      deliver(fin.packets);
      this.emit('progress', { fraction: 1, elapsedSec: run.durationSec, durationSec: run.durationSec });
      this.emit('state', { state: 'finishing' });
      const stats: CaptureStats = {
        framesRead: source.frames,
        framesWithFace: fin.framesWithFace,
        framesDropped: dropped,
        mainMsPerFrame: source.frames ? source.readMs / source.frames : 0,
        trackerMsPerFrame: fin.msPerFrame,
        detectMsPerCall: fin.detectMsPerCall,
        firstCropMs,
        analysisHz: fin.analysisHz,
        cameraLeadSec: Number.isFinite(cameraLeadSec) ? cameraLeadSec : undefined,
        ...cameraCounts(statsAtStart, statsAtEnd),
        bundleTransferBytes: bundle.transferBytes,
        humanLoadMs: tw.loadMs,
      };
      const outcome: CaptureOutcome = { mode: run.mode, stats };
      if (writer) outcome.framesFile = writer.toBytes();
      if (run.mode === 'on-device') {
        // The frames the tracker saw (not those dropped before it): the share with a face tells the
        // engine's quality reasons about the time without one, which no packet shows.
        const tracked = source.frames - dropped;
        const r = await this.finishEstimator(
          bundle.modelsVersion,
          tracked > 0 ? Math.min(1, fin.framesWithFace / tracked) : undefined,
        );
        outcome.result = r.result;
        outcome.measurement = r.measurement;
        stats.workerMsPerFrame = r.msPerFrame;
      } else if (session) {
        outcome.final = await session.stop();
      }
      this.emit('state', { state: 'done' });
      return outcome;
    } catch (err) {
      this.emit('state', { state: 'failed' });
      if (session && session.state !== 'done') {
        try {
          session.abort('capture failed');
        } catch {
          // already closed
        }
      }
      // The next run starts with fresh workers.
      this.closeWorkers();
      throw err;
    } finally {
      source.stop();
      tw.worker.removeEventListener('message', onOut);
      offEstimator();
      offSession?.();
      run.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Stops the camera and the workers. */
  close(): void {
    for (const t of this.stream?.getTracks() ?? []) t.stop();
    this.stream = null;
    this.closeWorkers();
  }

  private closeWorkers(): void {
    this.worker?.terminate();
    this.worker = null;
    this.tracker?.worker.terminate();
    this.tracker = null;
  }

  private async startTracker(bundle: LoadedBundle): Promise<TrackerWorker> {
    const url = this.opts.trackerWorkerUrl ?? new URL('./tracker-worker.js', import.meta.url);
    const worker = new Worker(url, { type: 'module', name: 'vitals-tracker' });
    const ready = nextMessage(worker, (d) => (d.t === 'ready' && 'version' in d ? d : undefined));
    // Copies: the bundle stays usable for a later tracker.
    const files: Record<string, ArrayBuffer> = {};
    for (const [k, v] of bundle.files) files[k] = v.slice().buffer;
    worker.postMessage({ t: 'init', files } satisfies ToTracker, Object.values(files));
    try {
      const r = await ready;
      return { worker, version: r.version, backend: r.backend, loadMs: r.loadMs };
    } catch (err) {
      worker.terminate();
      throw err;
    }
  }

  private async startEstimator(): Promise<Worker> {
    const url = this.opts.workerUrl ?? new URL('./estimator-worker.js', import.meta.url);
    const w = new Worker(url, { type: 'module', name: 'vitals-estimator' });
    await nextMessage(w, (d) => (d.t === 'ready' ? true : undefined));
    return w;
  }

  private listenEstimator(): () => void {
    const w = this.worker!;
    const fn = (e: MessageEvent<FromWorker>): void => {
      const m = e.data;
      if (m.t !== 'events') return;
      for (const ev of m.events) {
        this.emit('engine', ev);
        if (ev.t === 'hr') this.emit('hr', ev);
      }
      for (const p of m.wave) this.emit('wave', p);
    };
    w.addEventListener('message', fn);
    return () => w.removeEventListener('message', fn);
  }

  private finishEstimator(modelsVersion: string, facePresence?: number): Promise<FromWorker & { t: 'result' }> {
    const w = this.worker!;
    const result = nextMessage(w, (d) => (d.t === 'result' ? d : undefined));
    w.postMessage({ t: 'finish', sdkVersion: SDK_VERSION, modelsVersion, facePresence } satisfies ToWorker);
    return result;
  }
}

export { CameraError };
