/**
 * The on-device tier's estimator (isomorphic; runs in the Web Worker of estimator-worker.ts, and in
 * Node tests): the engine's StreamingEstimator fed with the capture's packets. It gives the live
 * events the cloud would send (`hr` only while the signal-quality index allows it, `hrv`, `bp`,
 * `spo2`), a display waveform, and at the end the engine's measurement (`finish()` equals
 * `estimateOffline` on the same packets: the frames file of the same capture, uploaded as a frames
 * job, gives the same heart rate) in the submission body shape.
 */
import { StreamingEstimator, type EngineEvent, type EngineMeasurement } from '@vitals/engine';
import { decodePacket, isPacketError, type Packet } from '@vitals/protocol';
import { toOnDeviceResult, type OnDeviceResult } from './result.js';

/** A point of the live pulse waveform: capture time and a unitless, roughly -1..1 value. */
export interface WavePoint {
  tMs: number;
  v: number;
}

/** Time constants of the display waveform (a band-pass of the crop's mean green, about 0.7-4 Hz). */
const SLOW_TAU_SEC = 0.6;
const FAST_TAU_SEC = 0.04;
const GAIN_TAU_SEC = 3;

export class OnDeviceEstimator {
  private readonly engine = new StreamingEstimator();
  private slow = NaN;
  private fast = NaN;
  private power = NaN;
  private lastT = NaN;
  /** Engine time spent in `push`, ms, and frames pushed (the per-frame cost in docs/benchmarks.md). */
  pushMs = 0;
  frames = 0;

  /** One packet in (decoded, or its wire bytes); the events it triggered and, for a crop, a wave point. */
  push(input: Packet | Uint8Array): { events: EngineEvent[]; wave: WavePoint | null } {
    let p: Packet;
    if (input instanceof Uint8Array) {
      const d = decodePacket(input);
      if (isPacketError(d)) return { events: [], wave: null };
      p = d as Packet;
    } else p = input;
    const t0 = now();
    const events = this.engine.push(p);
    if (p.type === 1) {
      this.pushMs += now() - t0;
      this.frames++;
    }
    return { events: [...events], wave: p.type === 1 ? this.wave(p.tMicros, p.pixels) : null };
  }

  /** The engine's measurement and the body a backend submits. */
  finish(
    versions: { sdkVersion: string; modelsVersion: string },
    /** Share of the camera's frames in which the tracker followed a face (the packets exist only there). */
    facePresence?: number,
  ): {
    measurement: EngineMeasurement;
    result: OnDeviceResult;
  } {
    const measurement = this.engine.finish(facePresence === undefined ? undefined : { facePresence });
    return { measurement, result: toOnDeviceResult(measurement, versions) };
  }

  private wave(tMicros: number, pixels: Uint8Array): WavePoint {
    let g = 0;
    for (let i = 1; i < pixels.length; i += 3) g += pixels[i];
    g /= pixels.length / 3;
    const t = tMicros / 1e6;
    const dt = Number.isNaN(this.lastT) ? 1 / 30 : Math.max(1e-3, t - this.lastT);
    this.lastT = t;
    if (Number.isNaN(this.slow)) {
      this.slow = g;
      this.fast = g;
      this.power = 1;
    }
    this.slow += (1 - Math.exp(-dt / SLOW_TAU_SEC)) * (g - this.slow);
    this.fast += (1 - Math.exp(-dt / FAST_TAU_SEC)) * (g - this.fast);
    // Skin is brighter in diastole: the pulse is the negative of the green variation.
    const x = this.slow - this.fast;
    this.power += (1 - Math.exp(-dt / GAIN_TAU_SEC)) * (x * x - this.power);
    const v = x / Math.sqrt(Math.max(this.power, 1e-6)) / 2.5;
    return { tMs: Math.round(t * 1000), v: Math.max(-1, Math.min(1, v)) };
  }
}

const perf = (globalThis as { performance?: { now(): number } }).performance;
const now = (): number => (perf ? perf.now() : Date.now());
