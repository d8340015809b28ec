// Streaming estimator: push packets, get `hr`, `hrv`, `bp` and `spo2` events at about 1 Hz of
// capture time (spec, Streaming events). Per frame it only appends one skin-weighted RGB sample
// (the same function the offline path uses); once per second of capture it analyses the last
// 10 s (one online Viterbi step: hr-track.ts; the `hr` event carries the capture rate so far,
// rate/live-rate.ts) and every 5 s the last 30 s (beats →
// HRV under the offline publication rule, beta BP and SpO2). `finish()` runs the offline chain over
// the accumulated trace, so its measurement equals `estimateOffline` on the same packets by
// construction.
import { HR_EVENT_MIN_SQI, type Packet } from '@vitals/protocol';
import { BufferPool } from '../dsp/buffers.js';
import { decimatedLength, medianIntervalMicros, resampleDecimated, resampleDecimatedInto } from '../dsp/resample.js';
import { median, roundTo } from '../dsp/stats.js';
import { assessQuality, publicationEvidence, publishes } from '../quality/quality.js';
import type { CaptureSource } from '../quality/capture-facts.js';
import { referencedPulses, textureReference } from '../pulse/background-reference.js';
import { powerSpectrum } from '../dsp/spectrum.js';
import { bandObservable, hrWindow, refineRateHz, type HrWindow } from '../rate/hr-spectrum.js';
import { argmax, viterbiStep, type ForwardState } from '../rate/hr-track.js';
import { LIVE_MIN_WINDOWS, LiveRate } from '../rate/live-rate.js';
import { hrNfft, HR_WINDOW_SEC } from '../rate/track-heart-rate.js';
import { appendPacket, createRgbTrace, type RgbTrace } from '../trace/rgb-trace.js';
import type { EngineEvent, EngineMeasurement } from '../types.js';
import { estimateBloodPressure, estimateSpo2 } from '../vitals/beta-models.js';
import { pulseToVitals, type PulseVitals } from '../vitals/pulse-vitals.js';
import { analyzeTrace, bandOf, redBlueRatioOfRatios, type AnalyzeOptions } from './analyze.js';
import { hrvPublishable } from './hrv-rule.js';

export interface StreamingOptions extends AnalyzeOptions {
  /** Capture seconds between heart-rate analyses (default 1). */
  hrIntervalSec?: number;
  /** Capture seconds between HRV/BP/SpO2 analyses (default 5). */
  slowIntervalSec?: number;
  /** Window for HRV/BP/SpO2 (default 30 s); first emitted once this much is captured, at least 20 s. */
  slowWindowSec?: number;
}

/** What push returns for the ~29 of 30 frames that trigger nothing (shared, never mutated). */
const NO_EVENTS: EngineEvent[] = Object.freeze([]) as unknown as EngineEvent[];

/**
 * Working arrays of the live analyses (the resampled channels, the pulse stages' outputs), shared
 * by every estimator on this thread: an analysis runs synchronously and no estimator keeps any of
 * them past it. One pool per analysis and window length (each pool's arrays fit that length, so
 * sessions at different frame rates do not reallocate each other's); a per-estimator pool held
 * ~49 KB a session (hr 10 KB, beats 39 KB at 30 fps).
 */
const livePools = new Map<number, BufferPool>();
function livePool(slow: boolean, n: number): BufferPool {
  const key = 2 * n + (slow ? 1 : 0);
  let p = livePools.get(key);
  if (!p) {
    // Bounded: lengths come from frame rates and window lengths, a few in practice.
    if (livePools.size >= 64) livePools.clear();
    p = new BufferPool();
    livePools.set(key, p);
  }
  return p;
}

export class StreamingEstimator {
  private readonly trace: RgbTrace = createRgbTrace(2048);
  private readonly hrStepMicros: number;
  private readonly slowStepMicros: number;
  private readonly slowWindowSec: number;
  private nextHrMicros = -1;
  private nextSlowMicros = -1;
  private forward: ForwardState | null = null;
  private lastHrHz = NaN;
  private lastSqi = 0;
  private readonly opts: AnalyzeOptions;
  /**
   * The previous heart-rate window (its spectra are overwritten by the next) and the tracker's
   * spare vector; with the shared pools (livePool): a live analysis allocates almost nothing.
   */
  private lastWindow: HrWindow | null = null;
  private spareDelta: Float64Array | undefined;
  /** The capture rate kept online (rate/live-rate.ts): the value of the `hr` events. */
  private readonly liveRate = new LiveRate();
  /** Every heart-rate window's SQI so far: the live `hrv` event needs the capture to grade `good`. */
  private readonly windowSqis: number[] = [];

  constructor(opts: StreamingOptions = {}) {
    this.opts = { band: opts.band };
    this.hrStepMicros = (opts.hrIntervalSec ?? 1) * 1e6;
    this.slowStepMicros = (opts.slowIntervalSec ?? 5) * 1e6;
    this.slowWindowSec = Math.max(20, opts.slowWindowSec ?? 30);
  }

  /** Adds one packet; returns the events it triggered (usually none: then a shared, frozen empty array). */
  push(p: Packet): EngineEvent[] {
    if (!appendPacket(this.trace, p)) return NO_EVENTS;
    const t = this.trace.tMicros[this.trace.n - 1];
    const t0 = this.trace.tMicros[0];
    if (this.nextHrMicros < 0) {
      this.nextHrMicros = t0 + HR_WINDOW_SEC * 1e6;
      this.nextSlowMicros = t0 + this.slowWindowSec * 1e6;
    }
    if (t < this.nextHrMicros) return NO_EVENTS;
    this.nextHrMicros += this.hrStepMicros * Math.max(1, Math.ceil((t - this.nextHrMicros + 1) / this.hrStepMicros));
    const events: EngineEvent[] = [];
    this.analyzeHeartRate(events, t);
    if (t >= this.nextSlowMicros) {
      this.nextSlowMicros +=
        this.slowStepMicros * Math.max(1, Math.ceil((t - this.nextSlowMicros + 1) / this.slowStepMicros));
      this.analyzeSlow(events, t);
    }
    return events;
  }

  /**
   * The whole capture through the offline chain (equal to `estimateOffline` of the same packets).
   * `source`: what the caller knows of the capture beyond its packets, for the quality reasons (a
   * camera's share of frames with a face: the packets only exist where there was one).
   */
  finish(source?: CaptureSource): EngineMeasurement {
    return analyzeTrace(this.trace, source ? { ...this.opts, source } : this.opts);
  }

  /**
   * What `finish()` analyses: `analyzeTrace(trace, opts)` of these gives its measurement. Plain
   * data (typed arrays), so the analysis of a long capture can run elsewhere, e.g. on a thread.
   */
  finishInput(): { trace: RgbTrace; opts: AnalyzeOptions } {
    return { trace: this.trace, opts: this.opts };
  }

  /** Frames currently held. */
  get framesUsed(): number {
    return this.trace.n;
  }

  private windowStart(tEnd: number, windowSec: number): number {
    const tr = this.trace;
    const tStart = tEnd - windowSec * 1e6;
    let lo = 0;
    let hi = tr.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tr.tMicros[mid] < tStart) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Pulses of the last `windowSec` of capture, analysed at ≥ `minAnalysisHz` (the resampled trace is
   * decimated by the largest integer factor that keeps at least that rate). The live analyses only
   * need the heart-rate band (≤ 3.5 Hz), so 10 Hz (HR) and 15 Hz (beats) keep what they use at a
   * half to a third of the cost; `finish()` still analyses at the full frame rate.
   */
  private windowPulses(tEnd: number, windowSec: number, minAnalysisHz: number, posOnly = false) {
    const tr = this.trace;
    const from = this.windowStart(tEnd, windowSec);
    const to = tr.n;
    if (to - from < 16) return null;
    const frameHz = 1e6 / medianIntervalMicros(tr.tMicros, from, to);
    if (!bandObservable(bandOf(this.opts), frameHz)) return null;
    const bgIn = tr.bg;
    const factor = Math.max(1, Math.floor(frameHz / minAnalysisHz));
    const fs = frameHz / factor;
    // Resampled at the frame rate and boxcar-decimated (dsp/resample.ts), fused into one pass.
    const sources = bgIn ? [tr.r, tr.g, tr.b, bgIn.r, bgIn.g, bgIn.b] : [tr.r, tr.g, tr.b];
    const withTexture = !posOnly && tr.texture !== null;
    if (withTexture) sources.push(tr.texture!);
    let ch: Float64Array[];
    let pool: BufferPool;
    if (factor > 1) {
      const m = decimatedLength(tr.tMicros, frameHz, factor, from, to);
      pool = livePool(posOnly, m);
      ch = sources.map((_, c) => pool.get(`in${c}`, m));
      resampleDecimatedInto(tr.tMicros, sources, frameHz, factor, from, to, m, ch);
    } else {
      ch = resampleDecimated(tr.tMicros, sources, frameHz, factor, { from, to });
      pool = livePool(posOnly, ch[0].length);
    }
    const [r, g, b, br, bgc, bb] = ch;
    if (r.length < 4 * fs) return null;
    return {
      fs,
      frameHz,
      r,
      b,
      texture: withTexture ? ch[sources.length - 1] : null,
      pulses: referencedPulses({ r, g, b }, bgIn ? { r: br, g: bgc, b: bb } : null, fs, bandOf(this.opts), {
        posOnly,
        pool,
      }),
    };
  }

  private analyzeHeartRate(events: EngineEvent[], tEnd: number): void {
    const w = this.windowPulses(tEnd, HR_WINDOW_SEC, 10);
    if (!w) return;
    const len = w.pulses.pos.length;
    const win = hrWindow(
      [w.pulses.pos, w.pulses.chrom],
      0,
      len,
      w.fs,
      hrNfft(len, w.fs),
      bandOf(this.opts),
      w.pulses.noise,
      this.lastWindow,
    );
    this.lastWindow = win;
    const prev = this.forward;
    this.forward = viterbiStep(prev, win, this.hrStepMicros / 1e6, undefined, undefined, this.spareDelta);
    this.spareDelta = prev?.logDelta;
    // The whole-band track's window SQI grades the capture as offline (the `hrv` event's rule).
    this.windowSqis.push(refineRateHz(win, win.lo + argmax(this.forward.logDelta)).sqi);
    // The event's rate is the capture rate so far; its SQI is this window's at the tracked rate
    // inside the anchor's corridor, so a window whose power sits on a noise peak elsewhere (codec
    // pumping near 1 Hz, in ubfc2) sends no event and holds the slow analyses.
    // The crop texture's spectrum joins the running sums only as the publication evidence's second
    // reference (live-anchor.ts `anchorShare`), as the final weighs its capture-level evidence.
    const tex = w.texture ? textureReference(w.texture, len, w.fs, bandOf(this.opts)) : null;
    const texPower = tex ? powerSpectrum(tex, w.fs, hrNfft(len, w.fs)).power : null;
    this.liveRate.add(win, w.pulses.pos, w.fs, texPower);
    const live = this.liveRate.estimate();
    const r = refineRateHz(win, live.bin);
    this.lastHrHz = r.freqHz;
    this.lastSqi = r.sqi;
    // Gated on the SQI as sent (2 decimals), so every event's `sqi` is above the spec's 0.38.
    const sqi = roundTo(r.sqi, 2);
    // No event while the running anchor may be the double of the rate (rate/live-anchor.ts), nor
    // while the capture so far would not be published (publishableSoFar).
    if (
      sqi > HR_EVENT_MIN_SQI &&
      this.liveRate.windows >= LIVE_MIN_WINDOWS &&
      !this.liveRate.doubtful &&
      this.publishableSoFar()
    ) {
      events.push({ t: 'hr', hr: roundTo(live.rateBpm, 1), sqi, tMs: Math.round(tEnd / 1000) });
    }
  }

  /**
   * The final's publication decision (quality.ts `publicationEvidence`, `publishes`: the pulse
   * evidence of the median window SQI and the capture-level agreement, at PUBLISH_EVIDENCE) on the
   * capture so far: every window's SQI so far (the whole-band track's, as offline) and the running
   * anchor's share (live-anchor.ts `anchorShare`). A live `hr` event is sent only while it holds, so
   * a person is shown a rate only where the stored measurement would publish one for the capture so
   * far (docs/engine.md, Streaming estimator).
   */
  private publishableSoFar(): boolean {
    const tr = this.trace;
    const durationSec = (tr.tMicros[tr.n - 1] - tr.tMicros[0]) / 1e6;
    return publishes(publicationEvidence(this.windowSqis, durationSec, { anchorShare: this.liveRate.anchorShare() }));
  }

  /**
   * The offline HRV rule (hrv-rule.ts `hrvPublishable`) on the capture so far, at the camera's frame
   * rate (`frameHz`, not the decimated analysis rate): graded as the offline
   * quality grades it from every window's SQI and the skin share of the last slow window (without
   * the capture-level evidence, so live is never looser than offline).
   */
  private hrvPublishableSoFar(v: PulseVitals, tEnd: number, sampleRateHz: number): boolean {
    const tr = this.trace;
    const from = this.windowStart(tEnd, this.slowWindowSec);
    const skin = median(tr.skinFraction.subarray(from, tr.n));
    const durationSec = (tr.tMicros[tr.n - 1] - tr.tMicros[0]) / 1e6;
    return hrvPublishable(v, assessQuality(this.windowSqis, skin, durationSec).level, durationSec, sampleRateHz);
  }

  private analyzeSlow(events: EngineEvent[], tEnd: number): void {
    // As the final nulls every metric of a capture it does not publish, no `hrv`, `bp` or `spo2`
    // event is sent while the capture so far would not be published (publishableSoFar).
    if (!(this.lastSqi > HR_EVENT_MIN_SQI) || !Number.isFinite(this.lastHrHz) || !this.publishableSoFar()) return;
    const w = this.windowPulses(tEnd, this.slowWindowSec, 15, true);
    if (!w) return;
    const pulse = w.pulses.pos;
    const v = pulseToVitals({ pulse, sampleRateHz: w.fs, hrHz: this.lastHrHz, skipBreathing: true });
    const h = v.hrv;
    if (h && this.hrvPublishableSoFar(v, tEnd, w.frameHz)) {
      events.push({
        t: 'hrv',
        rmssdMs: roundTo(h.rmssdMs, 1),
        sdnnMs: roundTo(h.sdnnMs, 1),
        meanRrMs: roundTo(h.meanRrMs, 1),
      });
    }
    const bp = estimateBloodPressure(this.lastHrHz * 60, v.riseFraction, this.lastSqi);
    events.push({
      t: 'bp',
      systolicMmHg: Math.round(bp.systolicMmHg),
      diastolicMmHg: Math.round(bp.diastolicMmHg),
      confidence: roundTo(bp.confidence, 2),
    });
    const sp = estimateSpo2(redBlueRatioOfRatios(w.r, w.b, w.fs, this.lastHrHz), this.lastSqi);
    events.push({ t: 'spo2', value: roundTo(sp.value, 1), confidence: roundTo(sp.confidence, 2) });
  }
}
