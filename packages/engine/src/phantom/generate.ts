// Phantom capture with known truth: face-like crops (face-render.ts) whose skin is modulated by a
// physiological pulse (pulse-model.ts), with sensor noise, 8-bit quantization, illumination drift,
// motion, dropped and jittered frames, and optional type-3 telemetry carrying head pitch that
// moves with breathing. Used by the tests, the benchmark and the docs; deterministic per seed.
import { quantizeTelemetry, type FaceCropPacket, type Packet, type TelemetryPacket } from '@vitals/protocol';
import { CROP_PIXELS, CROP_SIDE } from '../trace/face-prior.js';
import {
  DEFAULT_COLOURS,
  PBV_SIGNATURE,
  regionAt,
  regionColour,
  type FaceColours,
  type Region,
} from './face-render.js';
import { generateBeats, pulseWaveform } from './pulse-model.js';
import { createRng } from './rng.js';

export interface PhantomOptions {
  durationSec?: number;
  fps?: number;
  heartRateBpm?: number;
  breathingRateBpm?: number;
  /** Non-respiratory RR variability (SD), ms. Default 25. */
  rrJitterMs?: number;
  /** Peak-to-peak respiratory sinus arrhythmia, ms. Default 60. */
  rsaMs?: number;
  /** Relative green-channel pulse amplitude on skin (0.01 = 1 %, Verkruysse et al. 2008 report ~1 %). 0: no pulse. */
  pulseAmplitude?: number;
  /** Per-pixel sensor noise SD, 8-bit levels. Default 2. */
  noiseStd?: number;
  /** Relative illumination change over the capture (plus a slow oscillation of half that). */
  illuminationDrift?: number;
  /** Peak translation of the face inside the crop, pixels. */
  motionPx?: number;
  /** Probability that a frame is dropped. */
  dropRate?: number;
  /** Uniform timestamp jitter, ± ms. */
  jitterMs?: number;
  /** Emit type-3 telemetry (head pitch moving with breathing) with every frame. */
  telemetry?: boolean;
  /** Replace every crop by uniform random pixels (no face, no pulse). */
  pureNoise?: boolean;
  colours?: Partial<FaceColours>;
  seed?: number;
}

export interface PhantomTruth {
  heartRateBpm: number;
  breathingRateBpm: number;
  rrIntervalsMs: number[];
  sdnnMs: number;
  rmssdMs: number;
  pnn50Pct: number;
  /** Systolic peak times inside the capture, s. */
  beatTimesSec: number[];
  sampleRateHz: number;
  hasPulse: boolean;
}

function hrvOf(rr: number[]): { sdnn: number; rmssd: number; pnn50: number } {
  const m = rr.reduce((a, b) => a + b, 0) / rr.length;
  const sdnn = Math.sqrt(rr.reduce((a, b) => a + (b - m) ** 2, 0) / (rr.length - 1));
  let sq = 0;
  let over = 0;
  for (let i = 1; i < rr.length; i++) {
    const d = rr[i] - rr[i - 1];
    sq += d * d;
    if (Math.abs(d) > 50) over++;
  }
  return { sdnn, rmssd: Math.sqrt(sq / (rr.length - 1)), pnn50: (100 * over) / (rr.length - 1) };
}

function resolveOptions(o: PhantomOptions) {
  return {
    durationSec: o.durationSec ?? 60,
    fps: o.fps ?? 30,
    heartRateBpm: o.heartRateBpm ?? 72,
    breathingRateBpm: o.breathingRateBpm ?? 15,
    rrJitterMs: o.rrJitterMs ?? 25,
    rsaMs: o.rsaMs ?? 60,
    pulseAmplitude: o.pulseAmplitude ?? 0.01,
    noiseStd: o.noiseStd ?? 2,
    illuminationDrift: o.illuminationDrift ?? 0,
    motionPx: o.motionPx ?? 0,
    dropRate: o.dropRate ?? 0,
    jitterMs: o.jitterMs ?? 0,
    telemetry: o.telemetry ?? false,
    pureNoise: o.pureNoise ?? false,
    colours: { ...DEFAULT_COLOURS, ...o.colours },
    seed: o.seed ?? 1,
  };
}

/**
 * Lazily yields the phantom's packets; `truth` is known before the first packet.
 * @example
 *   const ph = phantomStream({ heartRateBpm: 80, durationSec: 30 });
 *   for (const p of ph.packets) estimator.push(p);
 */
export function phantomStream(opts: PhantomOptions = {}): { packets: Iterable<Packet>; truth: PhantomTruth } {
  const o = resolveOptions(opts);
  const rng = createRng(o.seed);
  const beats = generateBeats(
    {
      durationSec: o.durationSec,
      heartRateBpm: o.heartRateBpm,
      rrJitterMs: o.rrJitterMs,
      rsaMs: o.rsaMs,
      breathingRateBpm: o.breathingRateBpm,
      amplitudeModulation: 0.15,
    },
    rng,
  );
  const inside: number[] = [];
  for (const t of beats.peakSec) if (t >= 0 && t <= o.durationSec) inside.push(t);
  const rr = inside.slice(1).map((t, i) => (t - inside[i]) * 1000);
  const h = hrvOf(rr);
  const hasPulse = !o.pureNoise && o.pulseAmplitude > 0;
  const truth: PhantomTruth = {
    heartRateBpm: 60000 / (rr.reduce((a, b) => a + b, 0) / rr.length),
    breathingRateBpm: o.breathingRateBpm,
    rrIntervalsMs: rr,
    sdnnMs: h.sdnn,
    rmssdMs: h.rmssd,
    pnn50Pct: h.pnn50,
    beatTimesSec: inside,
    sampleRateHz: o.fps,
    hasPulse,
  };
  const frameRng = createRng(o.seed * 7919 + 13);
  function* packets(): Generator<Packet> {
    const cursor = { k: 0 };
    const nFrames = Math.floor(o.durationSec * o.fps);
    const regions = regionCache(o);
    // Fixed skin texture (pores, shading): ±6 % per pixel, so 8-bit quantization is dithered as on real skin.
    const texRng = createRng(o.seed * 31 + 7);
    const texture = Float32Array.from({ length: CROP_PIXELS }, () => 1 + 0.06 * (texRng.next() * 2 - 1));
    let lastT = -1;
    for (let f = 0; f < nFrames; f++) {
      const tNominal = f / o.fps;
      const jitter = ((frameRng.next() * 2 - 1) * o.jitterMs) / 1000;
      const drop = frameRng.next() < o.dropRate;
      const t = Math.max(0, tNominal + jitter);
      const tMicros = Math.round(t * 1e6);
      const pixels = new Uint8Array(CROP_PIXELS * 3);
      if (o.pureNoise) {
        for (let i = 0; i < pixels.length; i++) pixels[i] = Math.floor(frameRng.next() * 256);
      } else {
        renderFrame(pixels, regions, texture, t, o, beats, cursor, frameRng);
      }
      if (drop || tMicros <= lastT) continue;
      lastT = tMicros;
      const crop: FaceCropPacket = { type: 1, seq: f, tMicros, flags: 0, pixels };
      yield crop;
      if (o.telemetry) {
        const pitch = 1.5 * Math.sin(2 * Math.PI * (o.breathingRateBpm / 60) * t) + 0.3 * frameRng.normal();
        const slots = quantizeTelemetry({
          leftEyeOpenness: 0.8,
          rightEyeOpenness: 0.8,
          jawOpenness: 0.1,
          yawDeg: 0,
          pitchDeg: pitch,
          rollDeg: 0,
          faceWidthFraction: 0.4,
          meanBrightness: 0.5,
          motionScore: 0.05,
        });
        const tel: TelemetryPacket = { type: 3, tMicros, slots };
        yield tel;
      }
    }
  }
  return { packets: { [Symbol.iterator]: packets }, truth };
}

function renderFrame(
  pixels: Uint8Array,
  regions: RegionCache,
  texture: Float32Array,
  t: number,
  o: ReturnType<typeof resolveOptions>,
  beats: ReturnType<typeof generateBeats>,
  cursor: { k: number },
  rng: ReturnType<typeof createRng>,
): void {
  const side = CROP_SIDE;
  const npx = CROP_PIXELS;
  const fr = o.breathingRateBpm / 60;
  const illum =
    (1 + o.illuminationDrift * (t / o.durationSec) + 0.5 * o.illuminationDrift * Math.sin(2 * Math.PI * 0.05 * t)) *
    (1 + 0.002 * Math.sin(2 * Math.PI * fr * t)); // respiratory intensity variation (RIIV)
  const dx =
    (o.motionPx / CROP_SIDE) * (0.7 * Math.sin(2 * Math.PI * 0.23 * t) + 0.3 * Math.sin(2 * Math.PI * 0.61 * t + 1));
  const dy = (o.motionPx / CROP_SIDE) * 0.6 * Math.sin(2 * Math.PI * 0.17 * t + 2);
  const pulse = o.pulseAmplitude > 0 ? pulseWaveform(beats, t, cursor) : 0;
  // The regions move only with the face (a still phantom keeps the first frame's).
  const code = regions.code;
  if (regions.dx !== dx || regions.dy !== dy) {
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        code[y * side + x] = REGIONS.indexOf(regionAt((x + 0.5) / side - dx, (y + 0.5) / side - dy));
      }
    }
    regions.dx = dx;
    regions.dy = dy;
  }
  const colours = regions.colours;
  const scale = regions.pulseScale;
  const noiseStd = o.noiseStd;
  for (let i = 0; i < npx; i++) {
    const r = code[i];
    const tex = texture[i];
    for (let ch = 0; ch < 3; ch++) {
      // The same operations in the same order as c·illum·texture, × (1 − amplitude·signature·pulse).
      let v = colours[3 * r + ch] * illum * tex;
      if (r === SKIN) v *= 1 - scale[ch] * pulse;
      v += noiseStd * rng.normal();
      pixels[3 * i + ch] = v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
    }
  }
}

const REGIONS: readonly Region[] = ['skin', 'hair', 'eye', 'pupil', 'brow', 'lip', 'background'];
const SKIN = 0;

/**
 * A phantom's per-pixel regions (recomputed only when the face moved), each region's colour and
 * the pulse's per-channel scale, made once: a frame's per-pixel work allocates nothing (only the
 * frame's own pixel buffer is new).
 */
interface RegionCache {
  /** Each pixel's region, as its index in REGIONS. */
  code: Uint8Array;
  dx: number;
  dy: number;
  /** RGB of each region, in REGIONS order. */
  colours: Float64Array;
  pulseScale: Float64Array;
}

function regionCache(o: ReturnType<typeof resolveOptions>): RegionCache {
  const colours = Float64Array.from(REGIONS.flatMap((r) => regionColour(r, o.colours)));
  const pulseScale = Float64Array.from([0, 1, 2], (ch) => o.pulseAmplitude * (PBV_SIGNATURE[ch] / PBV_SIGNATURE[1]));
  return { code: new Uint8Array(CROP_PIXELS), dx: NaN, dy: NaN, colours, pulseScale };
}

/** The phantom as an array of packets plus its truth. */
export function generatePhantom(opts: PhantomOptions = {}): { packets: Packet[]; truth: PhantomTruth } {
  const s = phantomStream(opts);
  return { packets: Array.from(s.packets), truth: s.truth };
}
