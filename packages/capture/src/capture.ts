/**
 * `VitalsCapture`: a camera in the page to type 1/2/3 packets at the camera's rate (the same
 * tracker as the video pipeline: @vitals/tracker), with guidance and progress, and the packets
 * delivered on the device (the engine in a Web Worker) or to the cloud (`StreamSession`, any
 * delivery mode), optionally also kept as a frames file.
 *
 * Detection runs on the main thread on a budget: the tracker analyses 4 frames a second; when the
 * detector's time would pass `detectBudget` of the wall clock (a slow device), the analysis rate
 * steps down to 2 Hz so the camera keeps its frame rate (crops never wait on detection for more
 * than one analysis interval).
 */
import type { EngineEvent, EngineMeasurement } from '@vitals/engine';
import type { Packet } from '@vitals/protocol';
import { FramesWriter, SDK_VERSION, type FinalEvent, type StreamSession } from '@vitals/sdk';
import { createHumanFaceDetector, FaceTracker, type HumanSession } from '@vitals/tracker';
import { loadBundle, type LoadedBundle, type ModelGrant } from './bundle.js';
import { CameraError, openCamera } from './camera.js';
import { Emitter } from './emitter.js';
import { FrameSource, type CameraFrame } from './frame-source.js';
import { Guidance, GUIDANCE_MESSAGES, type GuidanceCode } from './guidance.js';
import { loadBrowserHuman } from './human-browser.js';
import type { WavePoint } from './on-device.js';
import { packetBytes } from './packets.js';
import type { OnDeviceResult } from './result.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

export type CaptureMode = 'on-device' | 'cloud';

export interface CaptureEvents {
  state: { state: 'preparing' | 'ready' | 'measuring' | 'finishing' | 'done' | 'failed' };
  guidance: { code: GuidanceCode | null; active: GuidanceCode[]; message: string | null };
  progress: { fraction: number; elapsedSec: number; durationSec: number };
  hr: { hr: number; sqi: number; tMs: number };
  wave: WavePoint;
  engine: EngineEvent;
  packet: Packet;
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
  /** Main-thread ms per camera frame: read back + tracking (detection included, averaged). */
  mainMsPerFrame: number;
  /** Detector ms per analysis. */
  detectMsPerCall: number;
  /** Engine ms per face crop in the worker (on the device). */
  workerMsPerFrame?: number;
  /** ms from the page's time origin (navigation start) to the first face crop. */
  firstCropMs?: number;
  analysisHz: number;
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

let humanOnce: Promise<HumanSession & { loadMs: number }> | null = null;

export class VitalsCapture extends Emitter<CaptureEvents> {
  private bundle: LoadedBundle | null = null;
  private human: (HumanSession & { loadMs: number }) | null = null;
  private stream: MediaStream | null = null;
  private worker: Worker | null = null;

  constructor(private readonly opts: CaptureOptions) {
    super();
  }

  get modelsVersion(): string | undefined {
    return this.bundle?.modelsVersion;
  }

  /** Camera, model bundle, detector and (on the device) the worker. Throws CameraError or BundleError. */
  async prepare(mode: CaptureMode): Promise<void> {
    this.emit('state', { state: 'preparing' });
    const v = this.opts.video;
    v.muted = true;
    v.playsInline = true;
    v.setAttribute('playsinline', '');
    v.autoplay = true;
    const camera = (async () => {
      this.stream = this.opts.stream ?? (await openCamera());
      v.srcObject = this.stream;
      await v.play().catch(() => undefined);
      if (!v.videoWidth) await new Promise((r) => v.addEventListener('loadeddata', r, { once: true }));
    })();
    const models = (async () => {
      const grant = typeof this.opts.grant === 'function' ? await this.opts.grant() : this.opts.grant;
      this.bundle = await loadBundle(grant);
      const bundle = this.bundle;
      humanOnce ??= loadBrowserHuman(bundle).catch((err: unknown) => {
        humanOnce = null;
        throw err;
      });
      this.human = await humanOnce;
    })();
    const results = await Promise.allSettled([camera, models]);
    for (const r of results) if (r.status === 'rejected') throw r.reason;
    if (mode === 'on-device') this.worker ??= await this.startWorker();
    this.emit('state', { state: 'ready' });
  }

  /** One measurement; resolves when it is complete (or rejects: aborted, failed). */
  async run(run: RunOptions): Promise<CaptureOutcome> {
    if (!this.human || !this.bundle || !this.stream) throw new Error('prepare() first');
    if (run.mode === 'on-device' && !this.worker) this.worker = await this.startWorker();
    const human = this.human;
    const bundle = this.bundle;
    const writer = run.keepFramesFile ? new FramesWriter() : null;
    const session = run.mode === 'cloud' ? run.session : undefined;
    if (run.mode === 'cloud' && !session) throw new Error('cloud mode needs a StreamSession');
    if (session && session.state === 'idle') await session.start();
    const offSession = session?.on('hr', (e) => this.emit('hr', { hr: e.hr, sqi: e.sqi, tMs: e.tMs }));

    const budget = this.opts.detectBudget ?? 0.35;
    let detectMs = 0;
    let detectCalls = 0;
    let detectEma = NaN;
    let firstCropMs: number | undefined;
    let trackMs = 0;
    const toWorker: ArrayBuffer[] = [];
    const tracker = new FaceTracker<CameraFrame>({
      detector: createHumanFaceDetector(human),
      keep: false,
      onPacket: (p) => {
        if (p.type === 1 && firstCropMs === undefined) firstCropMs = performance.now();
        const bytes = packetBytes(p);
        writer?.addPacket(bytes);
        session?.sendPacket(bytes);
        if (run.mode === 'on-device') toWorker.push(bytes.slice().buffer);
        this.emit('packet', p);
      },
      onFrameDone: (f) => source.give(f.data),
      onAnalysed: (a) => {
        detectMs += a.ms;
        detectCalls++;
        detectEma = Number.isNaN(detectEma) ? a.ms : detectEma + 0.2 * (a.ms - detectEma);
        if (tracker.analysisHz > 2 && detectEma * tracker.analysisHz > budget * 1000) tracker.setAnalysisHz(2);
      },
    });

    const guidance = new Guidance();
    const fpsWindow: number[] = [];
    let t0 = NaN;
    let lastProgress = -1;
    let dropped = 0;
    let pending = 0;
    let chain: Promise<void> = Promise.resolve();
    let ended = false;
    let resolveEnd!: () => void;
    const endOfCapture = new Promise<void>((r) => (resolveEnd = r));

    const onFrame = (f: CameraFrame): void => {
      if (ended) return source.give(f.data);
      if (Number.isNaN(t0)) t0 = f.tSec;
      const elapsed = f.tSec - t0;
      if (elapsed >= run.durationSec) {
        ended = true;
        source.give(f.data);
        resolveEnd();
        return;
      }
      fpsWindow.push(f.tSec);
      while (fpsWindow.length && fpsWindow[0] < f.tSec - 1) fpsWindow.shift();
      if (pending > 45) {
        dropped++;
        return source.give(f.data);
      }
      pending++;
      chain = chain.then(async () => {
        const s = performance.now();
        await tracker.push(f);
        trackMs += performance.now() - s;
        pending--;
        if (toWorker.length) this.post({ t: 'packets', list: toWorker.splice(0) });
        const cur = tracker.packetizer.current;
        const change = guidance.update({
          tSec: elapsed,
          face: cur !== null,
          widthFraction: cur?.widthFraction,
          brightness: cur ? cur.brightness : f.luma,
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
      });
    };
    const source = new FrameSource(this.opts.video, onFrame);
    const onAbort = (): void => {
      ended = true;
      resolveEnd();
    };
    run.signal?.addEventListener('abort', onAbort, { once: true });

    this.emit('state', { state: 'measuring' });
    const offWorker = this.worker ? this.listenWorker() : () => undefined;
    source.start();
    try {
      await endOfCapture;
      source.stop();
      await chain;
      run.signal?.throwIfAborted();
      await tracker.finish();
      this.emit('progress', { fraction: 1, elapsedSec: run.durationSec, durationSec: run.durationSec });
      this.emit('state', { state: 'finishing' });
      if (toWorker.length) this.post({ t: 'packets', list: toWorker.splice(0) });
      const stats: CaptureStats = {
        framesRead: source.frames,
        framesWithFace: tracker.packetizer.framesWithFace,
        framesDropped: dropped,
        mainMsPerFrame: source.frames ? (source.readMs + trackMs) / source.frames : 0,
        detectMsPerCall: detectCalls ? detectMs / detectCalls : 0,
        firstCropMs,
        analysisHz: tracker.analysisHz,
        bundleTransferBytes: bundle.transferBytes,
        humanLoadMs: human.loadMs,
      };
      const outcome: CaptureOutcome = { mode: run.mode, stats };
      if (writer) outcome.framesFile = writer.toBytes();
      if (run.mode === 'on-device') {
        const r = await this.finishWorker(bundle.modelsVersion);
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
      throw err;
    } finally {
      source.stop();
      offWorker();
      offSession?.();
      run.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Stops the camera and the worker. */
  close(): void {
    for (const t of this.stream?.getTracks() ?? []) t.stop();
    this.stream = null;
    this.worker?.terminate();
    this.worker = null;
  }

  private post(m: ToWorker): void {
    this.worker?.postMessage(m, m.t === 'packets' ? m.list : []);
  }

  private async startWorker(): Promise<Worker> {
    const url = this.opts.workerUrl ?? new URL('./estimator-worker.js', import.meta.url);
    const w = new Worker(url, { type: 'module', name: 'vitals-estimator' });
    await new Promise<void>((resolve, reject) => {
      w.addEventListener('message', (e: MessageEvent<FromWorker>) => e.data.t === 'ready' && resolve(), { once: true });
      w.addEventListener('error', (e) => reject(new Error(`the estimator worker failed to start: ${e.message}`)), {
        once: true,
      });
    });
    return w;
  }

  private listenWorker(): () => void {
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

  private finishWorker(modelsVersion: string): Promise<FromWorker & { t: 'result' }> {
    const w = this.worker!;
    return new Promise((resolve, reject) => {
      const fn = (e: MessageEvent<FromWorker>): void => {
        if (e.data.t === 'result') {
          w.removeEventListener('message', fn);
          resolve(e.data);
        } else if (e.data.t === 'error') {
          w.removeEventListener('message', fn);
          reject(new Error(e.data.message));
        }
      };
      w.addEventListener('message', fn);
      this.post({ t: 'finish', sdkVersion: SDK_VERSION, modelsVersion });
    });
  }
}

export { CameraError };
