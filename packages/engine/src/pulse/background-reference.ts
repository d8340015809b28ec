// Background-referenced artifact rejection. The crop is the face box with no padding, so its
// corners outside the face ellipse hold background and hair: no pulse, but the same illumination
// changes and video-codec pumping (keyframe brightness steps that repeat at the GOP period and
// its harmonics, strong in low-bitrate recordings) as the skin. Li et al., "Remote heart rate
// measurement from face videos under realistic situations", CVPR 2014, rectify the face trace
// with the background trace through an adaptive (NLMS) filter; here the same idea as a windowed
// least-squares regression of the three band-limited skin channels on the three band-limited
// background channels (10 s Hann windows, half overlap, overlap-added), followed by spectral
// down-weighting of the frequencies where the background itself carries power (hr-spectrum.ts).
import { bandLimitedChannel, conditionPulse, extractPulses, unitVariance, type PulseBand } from './pulse-signals.js';
import { posPulse } from './pos.js';
import { chromPulse } from './chrom.js';

export interface Channels {
  r: Float64Array;
  g: Float64Array;
  b: Float64Array;
}

const WINDOW_SEC = 10;
/** Ridge term relative to the background's own energy: a flat background yields no correction. */
const RIDGE = 1e-3;

/**
 * Skin channels with everything the background explains removed, in the band-limited form POS
 * and CHROM take (1 + in-band fluctuation). Returns the plain band-limited channels when the
 * background is flat or the capture shorter than one window.
 */
export function rejectBackground(skin: Channels, bg: Channels, sampleRateHz: number, band: PulseBand): Channels {
  return rejectBandLimited(skin, bandLimited(bg, sampleRateHz, band), sampleRateHz, band);
}

/** The three channels normalised and band-limited (bandLimitedChannel). */
function bandLimited(c: Channels, sampleRateHz: number, band: PulseBand): Channels {
  return {
    r: bandLimitedChannel(c.r, sampleRateHz, band),
    g: bandLimitedChannel(c.g, sampleRateHz, band),
    b: bandLimitedChannel(c.b, sampleRateHz, band),
  };
}

/** The band-limited background channels as zero-mean references. */
function backgroundRefs(bgBand: Channels): Float64Array[] {
  return [bgBand.r, bgBand.g, bgBand.b].map((c) => c.map((v) => v - 1));
}

/** rejectBackground with the background already band-limited (shared with backgroundPulse). */
function rejectBandLimited(skin: Channels, bgBand: Channels, sampleRateHz: number, band: PulseBand): Channels {
  return rejectReferences(skin, backgroundRefs(bgBand), sampleRateHz, band);
}

/**
 * Windowed least-squares rejection of any number of reference signals (band-limited, zero mean:
 * the three background channels, the corners' texture energy) from the band-limited skin channels:
 * 10 s Hann windows with half overlap, overlap-added. Band-limited signals have few independent
 * samples (≈ 2 × bandwidth × duration), so q regressors explain a share q/dof of any skin trace by
 * chance alone; each fit is shrunk by max(0, 1 − chance/R²): a chance fit removes nothing, a real
 * shared artifact almost all of it. A ridge term relative to the references' energy keeps a flat
 * reference from producing a correction.
 */
function rejectReferences(skin: Channels, refs: Float64Array[], sampleRateHz: number, band: PulseBand): Channels {
  const s = [skin.r, skin.g, skin.b].map((c) => bandLimitedChannel(c, sampleRateHz, band));
  const n = s[0].length;
  for (const c of s) for (let i = 0; i < n; i++) c[i] -= 1;
  const q = refs.length;
  const len = Math.min(n, Math.round(WINDOW_SEC * sampleRateHz));
  if (len < 8 || q === 0) return { r: s[0].map((v) => v + 1), g: s[1].map((v) => v + 1), b: s[2].map((v) => v + 1) };
  const out = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  const wsum = new Float64Array(n);
  const step = Math.max(1, len >> 1);
  const starts: number[] = [];
  for (let st = 0; st + len <= n; st += step) starts.push(st);
  if (starts[starts.length - 1] + len < n) starts.push(n - len);
  const dof = Math.max(2 * q, 2 * (band.highHz - band.lowHz) * (len / sampleRateHz));
  const chance = q / dof;
  const fit = new Float64Array(len);
  for (const st of starts) {
    const end = st + len;
    const xtx = new Float64Array(q * q);
    const xty = [new Float64Array(q), new Float64Array(q), new Float64Array(q)];
    for (let a = 0; a < q; a++) {
      const xa = refs[a];
      for (let b = a; b < q; b++) {
        const xb = refs[b];
        let acc = 0;
        for (let i = st; i < end; i++) acc += xa[i] * xb[i];
        xtx[a * q + b] = acc;
        xtx[b * q + a] = acc;
      }
      for (let c = 0; c < 3; c++) {
        const sc = s[c];
        let acc = 0;
        for (let i = st; i < end; i++) acc += xa[i] * sc[i];
        xty[c][a] = acc;
      }
    }
    let trace = 0;
    for (let a = 0; a < q; a++) trace += xtx[a * q + a];
    const ridge = RIDGE * trace + 1e-15;
    for (let a = 0; a < q; a++) xtx[a * q + a] += ridge;
    for (let c = 0; c < 3; c++) {
      const beta = solveN(xtx, xty[c], q);
      const sc = s[c];
      let ss = 0;
      let fitSs = 0;
      for (let i = st; i < end; i++) {
        let f = 0;
        for (let a = 0; a < q; a++) f += beta[a] * refs[a][i];
        fit[i - st] = f;
        ss += sc[i] * sc[i];
        fitSs += f * f;
      }
      const r2 = ss > 0 ? Math.min(1, fitSs / ss) : 0;
      const shrink = r2 > chance ? 1 - chance / r2 : 0;
      const o = out[c];
      for (let i = st; i < end; i++) {
        const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i - st + 0.5)) / len);
        if (c === 0) wsum[i] += w;
        o[i] += w * (sc[i] - shrink * fit[i - st]);
      }
    }
  }
  for (let c = 0; c < 3; c++) for (let i = 0; i < n; i++) out[c][i] = (wsum[i] > 1e-9 ? out[c][i] / wsum[i] : s[c][i]) + 1;
  return { r: out[0], g: out[1], b: out[2] };
}

/** Solves the q×q system A x = y (A row-major, not modified); zeros when singular. */
function solveN(a: Float64Array, y: Float64Array, q: number): Float64Array {
  const m = new Float64Array(q * (q + 1));
  for (let r = 0; r < q; r++) {
    for (let c = 0; c < q; c++) m[r * (q + 1) + c] = a[r * q + c];
    m[r * (q + 1) + q] = y[r];
  }
  const w = q + 1;
  for (let c = 0; c < q; c++) {
    let p = c;
    for (let r = c + 1; r < q; r++) if (Math.abs(m[r * w + c]) > Math.abs(m[p * w + c])) p = r;
    if (Math.abs(m[p * w + c]) < 1e-18) return new Float64Array(q);
    if (p !== c) for (let k = 0; k < w; k++) [m[c * w + k], m[p * w + k]] = [m[p * w + k], m[c * w + k]];
    for (let r = 0; r < q; r++) {
      if (r === c) continue;
      const f = m[r * w + c] / m[c * w + c];
      if (f === 0) continue;
      for (let k = c; k < w; k++) m[r * w + k] -= f * m[c * w + k];
    }
  }
  const x = new Float64Array(q);
  for (let r = 0; r < q; r++) x[r] = m[r * w + q] / m[r * w + r];
  return x;
}

/** The background run through the same POS projection: what a pulse-less region "measures". */
export function backgroundPulse(bg: Channels, sampleRateHz: number, band: PulseBand): Float64Array {
  return backgroundPulseBandLimited(bandLimited(bg, sampleRateHz, band), sampleRateHz, band);
}

function backgroundPulseBandLimited(bgBand: Channels, sampleRateHz: number, band: PulseBand): Float64Array {
  return conditionPulse(posPulse(bgBand.r, bgBand.g, bgBand.b, sampleRateHz), sampleRateHz, band);
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
function textureReference(texture: Float64Array | null | undefined, n: number, sampleRateHz: number, band: PulseBand): Float64Array | null {
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
 * one (the same stages for the offline and the streaming estimator).
 */
export function referencedPulses(
  skin: Channels,
  bg: Channels | null,
  sampleRateHz: number,
  band: PulseBand,
  opts: { posOnly?: boolean; texture?: Float64Array | null } = {},
): ReferencedPulses {
  if (opts.posOnly) {
    // Only the POS pulse (the streaming beat analysis): no CHROM, no background spectrum.
    const c = hasBackground(bg) ? rejectBandLimited(skin, bandLimited(bg, sampleRateHz, band), sampleRateHz, band) : null;
    const r = c ? c.r : bandLimitedChannel(skin.r, sampleRateHz, band);
    const g = c ? c.g : bandLimitedChannel(skin.g, sampleRateHz, band);
    const b = c ? c.b : bandLimitedChannel(skin.b, sampleRateHz, band);
    const pos = unitVariance(conditionPulse(posPulse(r, g, b, sampleRateHz), sampleRateHz, band));
    return { pos, chrom: pos, noise: null, noises: [] };
  }
  const tex = textureReference(opts.texture, skin.r.length, sampleRateHz, band);
  if (!hasBackground(bg)) {
    const p = extractPulses(skin.r, skin.g, skin.b, sampleRateHz, band);
    return { pos: p.pos, chrom: p.chrom, noise: null, noises: tex ? [unitVariance(tex)] : [] };
  }
  const bgBand = bandLimited(bg, sampleRateHz, band);
  const c = tex
    ? rejectReferences(skin, [...backgroundRefs(bgBand), tex], sampleRateHz, band)
    : rejectBandLimited(skin, bgBand, sampleRateHz, band);
  const pos = conditionPulse(posPulse(c.r, c.g, c.b, sampleRateHz), sampleRateHz, band);
  const chrom = conditionPulse(chromPulse(c.r, c.g, c.b, sampleRateHz, band), sampleRateHz, band);
  const noise = unitVariance(backgroundPulseBandLimited(bgBand, sampleRateHz, band));
  const noises = tex ? [noise, unitVariance(tex)] : [noise];
  return { pos: unitVariance(pos), chrom: unitVariance(chrom), noise, noises };
}
