// Background-referenced artifact rejection. The crop is the face box with no padding, so its
// corners outside the face ellipse hold background and hair: no pulse, but the same illumination
// changes and video-codec pumping (keyframe brightness steps that repeat at the GOP period and
// its harmonics, strong in low-bitrate recordings) as the skin. Li et al., "Remote heart rate
// measurement from face videos under realistic situations", CVPR 2014, rectify the face trace
// with the background trace through an adaptive (NLMS) filter; here the same idea as a windowed
// least-squares regression of the three band-limited skin channels on the three band-limited
// background channels (10 s Hann windows, half overlap, overlap-added), followed by spectral
// down-weighting of the frequencies where the background itself carries power (hr-spectrum.ts).
import {
  bandLimitedChannel,
  conditionPulse,
  extractPulses,
  unitVariance,
  type Channels,
  type PulseBand,
} from './pulse-signals.js';
import { posPulse } from './pos.js';
import { chromPulse } from './chrom.js';
import { scratchSlots, type BufferPool } from '../dsp/buffers.js';
import { rejectReferences, type RejectOptions } from './reference-regression.js';

/**
 * Significance at which a reference fit is removed from the pulse beats are timed on (beat-timing
 * pulse; reference-regression.ts `RejectOptions`): one window and channel in a thousand has a chance
 * fit removed.
 */
export const BEAT_REFERENCE_SIGNIFICANCE = 0.001;

/**
 * Skin channels with everything the background explains removed, in the band-limited form POS
 * and CHROM take (1 + in-band fluctuation). Returns the plain band-limited channels when the
 * background is flat or the capture shorter than one window.
 */
export function rejectBackground(skin: Channels, bg: Channels, sampleRateHz: number, band: PulseBand): Channels {
  return rejectBandLimited(skin, bandLimited(bg, sampleRateHz, band), sampleRateHz, band);
}

/** Scratch slots (dsp/buffers.ts): 0–2 the band-limited background, 3–5 its zero-mean references. */
const grow = scratchSlots();

/** The three channels normalised and band-limited (bandLimitedChannel), in scratch slots 0–2. */
function bandLimited(c: Channels, sampleRateHz: number, band: PulseBand): Channels {
  const n = c.r.length;
  return {
    r: bandLimitedChannel(c.r, sampleRateHz, band, grow(0, n)),
    g: bandLimitedChannel(c.g, sampleRateHz, band, grow(1, n)),
    b: bandLimitedChannel(c.b, sampleRateHz, band, grow(2, n)),
  };
}

/** The band-limited background channels as zero-mean references (scratch slots 3–5, length n each). */
function backgroundRefs(bgBand: Channels): Float64Array[] {
  return [bgBand.r, bgBand.g, bgBand.b].map((c, k) => {
    const n = c.length;
    const x = grow(3 + k, n).subarray(0, n);
    for (let i = 0; i < n; i++) x[i] = c[i] - 1;
    return x;
  });
}

/** rejectBackground with the background already band-limited (shared with backgroundPulse). */
function rejectBandLimited(
  skin: Channels,
  bgBand: Channels,
  sampleRateHz: number,
  band: PulseBand,
  pool?: BufferPool,
  opts?: RejectOptions,
): Channels {
  return rejectReferences(skin, backgroundRefs(bgBand), sampleRateHz, band, pool, opts);
}

/** The background run through the same POS projection: what a pulse-less region "measures". */
export function backgroundPulse(bg: Channels, sampleRateHz: number, band: PulseBand): Float64Array {
  return backgroundPulseBandLimited(bandLimited(bg, sampleRateHz, band), sampleRateHz, band);
}

function backgroundPulseBandLimited(
  bgBand: Channels,
  sampleRateHz: number,
  band: PulseBand,
  pool?: BufferPool,
): Float64Array {
  const n = bgBand.r.length;
  const raw = posPulse(bgBand.r, bgBand.g, bgBand.b, sampleRateHz, pool?.get('raw', n));
  return conditionPulse(raw, sampleRateHz, band, pool?.get('noise', n));
}

/** True when the background moves at all (a synthetic or cropped-tight input may have none). */
export function hasBackground(bg: Channels | null): bg is Channels {
  if (!bg || bg.g.length < 8) return false;
  let m = 0;
  for (let i = 0; i < bg.g.length; i++) m += bg.g[i];
  m /= bg.g.length;
  let v = 0;
  for (let i = 0; i < bg.g.length; i++) v += (bg.g[i] - m) ** 2;
  return m > 1 && v / bg.g.length > 1e-6;
}

export interface ReferencedPulses {
  pos: Float64Array;
  chrom: Float64Array;
  /** The background's own POS pulse (for spectral down-weighting), or null without a background. */
  noise: Float64Array | null;
  /**
   * Every pulse-less reference as the chain sees it (the background's POS pulse, then the
   * band-limited crop texture when the trace has one), for the capture-level spectral
   * down-weighting (rate/capture-rate.ts). Empty without references.
   */
  noises: Float64Array[];
}

/**
 * The background corners' texture energy (trace/texture.ts) band-limited like the skin channels,
 * zero mean; null when flat or absent. Regressed out with the background colour and used as a
 * spectral reference.
 */
export function textureReference(
  texture: Float64Array | null | undefined,
  n: number,
  sampleRateHz: number,
  band: PulseBand,
): Float64Array | null {
  if (!texture || texture.length < n || n < 8) return null;
  const x = bandLimitedChannel(texture.length === n ? texture : texture.subarray(0, n), sampleRateHz, band);
  let v = 0;
  for (let i = 0; i < n; i++) {
    x[i] -= 1;
    v += x[i] * x[i];
  }
  return v / n > 1e-12 ? x : null;
}

/**
 * POS and CHROM pulses from skin channels, with the background rejected first when the trace has
 * one (the same stages for the offline and the streaming estimator). With `pool`, the returned
 * arrays are the pool's (valid until its next use; the streaming estimator's live windows) and
 * no array is allocated for the background path.
 */
export function referencedPulses(
  skin: Channels,
  bg: Channels | null,
  sampleRateHz: number,
  band: PulseBand,
  opts: { posOnly?: boolean; texture?: Float64Array | null; pool?: BufferPool } = {},
): ReferencedPulses {
  const pool = opts.pool;
  const n = skin.r.length;
  if (opts.posOnly) {
    // Only the POS pulse (the streaming beat analysis): no CHROM, no background spectrum; beats are
    // timed on it, so only significant background fits are removed (as in beatTimingPulse).
    const c = hasBackground(bg)
      ? rejectBandLimited(skin, bandLimited(bg, sampleRateHz, band), sampleRateHz, band, pool, {
          significance: BEAT_REFERENCE_SIGNIFICANCE,
        })
      : null;
    const r = c ? c.r : bandLimitedChannel(skin.r, sampleRateHz, band);
    const g = c ? c.g : bandLimitedChannel(skin.g, sampleRateHz, band);
    const b = c ? c.b : bandLimitedChannel(skin.b, sampleRateHz, band);
    const raw = posPulse(r, g, b, sampleRateHz, pool?.get('raw', n));
    const pos = unitVariance(conditionPulse(raw, sampleRateHz, band, pool?.get('pos', n)));
    return { pos, chrom: pos, noise: null, noises: [] };
  }
  const tex = textureReference(opts.texture, n, sampleRateHz, band);
  if (!hasBackground(bg)) {
    const p = extractPulses(skin.r, skin.g, skin.b, sampleRateHz, band);
    return { pos: p.pos, chrom: p.chrom, noise: null, noises: tex ? [unitVariance(tex)] : [] };
  }
  const bgBand = bandLimited(bg, sampleRateHz, band);
  const c = tex
    ? rejectReferences(skin, [...backgroundRefs(bgBand), tex], sampleRateHz, band, pool)
    : rejectBandLimited(skin, bgBand, sampleRateHz, band, pool);
  const pos = conditionPulse(
    posPulse(c.r, c.g, c.b, sampleRateHz, pool?.get('raw', n)),
    sampleRateHz,
    band,
    pool?.get('pos', n),
  );
  const chrom = conditionPulse(
    chromPulse(c.r, c.g, c.b, sampleRateHz, band, pool?.get('raw', n)),
    sampleRateHz,
    band,
    pool?.get('chrom', n),
  );
  const noise = unitVariance(backgroundPulseBandLimited(bgBand, sampleRateHz, band, pool));
  const noises = tex ? [noise, unitVariance(tex)] : [noise];
  return { pos: unitVariance(pos), chrom: unitVariance(chrom), noise, noises };
}

/**
 * The pulse beats are timed on (estimators/analyze.ts): the same method and stages as
 * `referencedPulses`, but a reference fit is removed only where it is significant
 * (BEAT_REFERENCE_SIGNIFICANCE), not merely above the chance share. A chance fit removed from the
 * heart-rate pulse takes a pulse-sized piece of the references' noise with it, which moves the beat
 * peaks by an amount that does not shrink as the pulse grows (reference-regression.ts); a real
 * shared artifact (codec pumping, a light change) explains far more than chance and is still
 * removed.
 */
export function beatTimingPulse(
  skin: Channels,
  bg: Channels | null,
  sampleRateHz: number,
  band: PulseBand,
  method: 'pos' | 'chrom',
  opts: { texture?: Float64Array | null } = {},
): Float64Array {
  if (!hasBackground(bg)) {
    const p = extractPulses(skin.r, skin.g, skin.b, sampleRateHz, band);
    return method === 'pos' ? p.pos : p.chrom;
  }
  const tex = textureReference(opts.texture, skin.r.length, sampleRateHz, band);
  const refs = [...backgroundRefs(bandLimited(bg, sampleRateHz, band)), ...(tex ? [tex] : [])];
  const c = rejectReferences(skin, refs, sampleRateHz, band, undefined, { significance: BEAT_REFERENCE_SIGNIFICANCE });
  const raw = method === 'pos' ? posPulse(c.r, c.g, c.b, sampleRateHz) : chromPulse(c.r, c.g, c.b, sampleRateHz, band);
  return unitVariance(conditionPulse(raw, sampleRateHz, band));
}
