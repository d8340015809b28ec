// Per-frame trace accumulation shared by both estimators (so streaming `finish()` and
// `estimateOffline` see identical traces by construction). Growable typed arrays: capacity doubles.
import type { Packet } from '@vitals/protocol';
import { dequantizeTelemetry } from '@vitals/protocol';
import { cropTexture } from './texture.js';
import { skinWeightedRgbInto } from './skin-trace.js';
import { createSkinTraceState, type SkinSample, type SkinTraceState } from './skin-trace-state.js';

export interface RgbTrace {
  n: number;
  tMicros: Float64Array;
  r: Float64Array;
  g: Float64Array;
  b: Float64Array;
  skinFraction: Float32Array;
  /** Background reference per frame (pixels outside the face ellipse); absent for traces built from RGB means. */
  bg: { r: Float64Array; g: Float64Array; b: Float64Array } | null;
  /** Crop texture energy per frame (texture.ts), a codec-artifact reference; absent like `bg`. */
  texture: Float64Array | null;
  /** Face-region luma and clipped share per frame (exposure.ts), for the quality reasons; absent like `bg`. */
  exposure: { luma: Float32Array; clipped: Float32Array } | null;
  /** Type-3 telemetry samples (head pose, motion) when any were received. */
  telemetry: { n: number; tMicros: Float64Array; pitchDeg: Float32Array; motion: Float32Array };
  /** Type-1 packets ignored because their timestamp did not increase. */
  framesRejected: number;
  /** Most recent type-2 packet, kept for statistics only (spec: not gating). */
  lastQuality: { faceWidthRatio: number; meanBrightness: number; motionScore: number } | null;
  skin: SkinTraceState;
}

export function createRgbTrace(capacity = 1024): RgbTrace {
  return {
    n: 0,
    tMicros: new Float64Array(capacity),
    r: new Float64Array(capacity),
    g: new Float64Array(capacity),
    b: new Float64Array(capacity),
    skinFraction: new Float32Array(capacity),
    bg: { r: new Float64Array(capacity), g: new Float64Array(capacity), b: new Float64Array(capacity) },
    texture: new Float64Array(capacity),
    exposure: { luma: new Float32Array(capacity), clipped: new Float32Array(capacity) },
    telemetry: { n: 0, tMicros: new Float64Array(256), pitchDeg: new Float32Array(256), motion: new Float32Array(256) },
    framesRejected: 0,
    lastQuality: null,
    skin: createSkinTraceState(),
  };
}

function grow<T extends Float64Array | Float32Array>(a: T, size: number): T {
  const b = new (a.constructor as { new (n: number): T })(size);
  b.set(a);
  return b;
}

function ensureCapacity(t: RgbTrace): void {
  if (t.n < t.tMicros.length) return;
  const size = t.tMicros.length * 2;
  t.tMicros = grow(t.tMicros, size);
  t.r = grow(t.r, size);
  t.g = grow(t.g, size);
  t.b = grow(t.b, size);
  t.skinFraction = grow(t.skinFraction, size);
  if (t.bg) t.bg = { r: grow(t.bg.r, size), g: grow(t.bg.g, size), b: grow(t.bg.b, size) };
  if (t.texture) t.texture = grow(t.texture, size);
  if (t.exposure) t.exposure = { luma: grow(t.exposure.luma, size), clipped: grow(t.exposure.clipped, size) };
}

function appendTelemetry(t: RgbTrace, tMicros: number, slots: Uint8Array): void {
  const tel = t.telemetry;
  if (tel.n > 0 && tMicros <= tel.tMicros[tel.n - 1]) return;
  if (tel.n >= tel.tMicros.length) {
    const size = tel.tMicros.length * 2;
    tel.tMicros = grow(tel.tMicros, size);
    tel.pitchDeg = grow(tel.pitchDeg, size);
    tel.motion = grow(tel.motion, size);
  }
  const v = dequantizeTelemetry(slots);
  tel.tMicros[tel.n] = tMicros;
  tel.pitchDeg[tel.n] = v.pitchDeg;
  tel.motion[tel.n] = v.motionScore;
  tel.n++;
}

/** Per-frame scratch (appendPacket is synchronous and copies the sample out at once). */
const sample: SkinSample = { r: 0, g: 0, b: 0, skinFraction: 0, bgR: 0, bgG: 0, bgB: 0, luma: 0, clipped: 0 };

/** Adds one packet to the trace. Returns true when a new RGB sample was appended. */
export function appendPacket(t: RgbTrace, p: Packet): boolean {
  switch (p.type) {
    case 1: {
      if (t.n > 0 && p.tMicros <= t.tMicros[t.n - 1]) {
        t.framesRejected++;
        return false;
      }
      ensureCapacity(t);
      const s = skinWeightedRgbInto(p.pixels, t.skin, sample);
      const i = t.n;
      t.tMicros[i] = p.tMicros;
      t.r[i] = s.r;
      t.g[i] = s.g;
      t.b[i] = s.b;
      t.skinFraction[i] = s.skinFraction;
      if (t.bg) {
        t.bg.r[i] = s.bgR;
        t.bg.g[i] = s.bgG;
        t.bg.b[i] = s.bgB;
      }
      if (t.texture) t.texture[i] = cropTexture(p.pixels);
      if (t.exposure) {
        t.exposure.luma[i] = s.luma;
        t.exposure.clipped[i] = s.clipped;
      }
      t.n = i + 1;
      return true;
    }
    case 2:
      t.lastQuality = {
        faceWidthRatio: p.faceWidthRatio,
        meanBrightness: p.meanBrightness,
        motionScore: p.motionScore,
      };
      return false;
    case 3:
      appendTelemetry(t, p.tMicros, p.slots);
      return false;
    default:
      return false; // type 4 (aux JPEG) carries no pulse signal
  }
}

/** Builds a trace from any iterable of packets (the offline path). */
export function buildRgbTrace(packets: Iterable<Packet>): RgbTrace {
  const t = createRgbTrace();
  for (const p of packets) appendPacket(t, p);
  return t;
}

/** A trace from RGB means already computed elsewhere (skin patches, tests). */
export function traceFromRgb(
  tMicros: ArrayLike<number>,
  r: ArrayLike<number>,
  g: ArrayLike<number>,
  b: ArrayLike<number>,
): RgbTrace {
  const n = tMicros.length;
  const t = createRgbTrace(Math.max(4, n));
  t.tMicros.set(tMicros as ArrayLike<number>);
  t.r.set(r as ArrayLike<number>);
  t.g.set(g as ArrayLike<number>);
  t.b.set(b as ArrayLike<number>);
  t.skinFraction.fill(1, 0, n);
  t.bg = null;
  t.texture = null;
  t.exposure = null;
  t.n = n;
  return t;
}
