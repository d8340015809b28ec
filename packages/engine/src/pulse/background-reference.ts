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

/** Solves the 3x3 symmetric system A x = y in place (Gaussian elimination with partial pivoting). */
function solve3(a: number[], y: number[]): number[] | null {
  const m = [
    [a[0], a[1], a[2], y[0]],
    [a[3], a[4], a[5], y[1]],
    [a[6], a[7], a[8], y[2]],
  ];
  for (let c = 0; c < 3; c++) {
    let p = c;
    for (let r = c + 1; r < 3; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    if (Math.abs(m[p][c]) < 1e-18) return null;
    [m[c], m[p]] = [m[p], m[c]];
    for (let r = 0; r < 3; r++) {
      if (r === c) continue;
      const f = m[r][c] / m[c][c];
      for (let k = c; k < 4; k++) m[r][k] -= f * m[c][k];
    }
  }
  return [m[0][3] / m[0][0], m[1][3] / m[1][1], m[2][3] / m[2][2]];
}

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

/** rejectBackground with the background already band-limited (shared with backgroundPulse). */
function rejectBandLimited(skin: Channels, bgBand: Channels, sampleRateHz: number, band: PulseBand): Channels {
  const s = [skin.r, skin.g, skin.b].map((c) => bandLimitedChannel(c, sampleRateHz, band));
  const x = [bgBand.r, bgBand.g, bgBand.b].map((c) => Float64Array.from(c));
  const n = s[0].length;
  for (const c of [...s, ...x]) for (let i = 0; i < n; i++) c[i] -= 1;
  const len = Math.min(n, Math.round(WINDOW_SEC * sampleRateHz));
  const out = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
  const wsum = new Float64Array(n);
  if (len < 8) return { r: s[0].map((v) => v + 1), g: s[1].map((v) => v + 1), b: s[2].map((v) => v + 1) };
  const step = Math.max(1, len >> 1);
  const starts: number[] = [];
  for (let st = 0; st + len <= n; st += step) starts.push(st);
  if (starts[starts.length - 1] + len < n) starts.push(n - len);
  for (const st of starts) {
    const end = st + len;
    const xtx = new Array<number>(9).fill(0);
    const xty = [new Array<number>(3).fill(0), new Array<number>(3).fill(0), new Array<number>(3).fill(0)];
    for (let i = st; i < end; i++) {
      for (let a = 0; a < 3; a++) {
        const xa = x[a][i];
        for (let b = 0; b < 3; b++) xtx[3 * a + b] += xa * x[b][i];
        for (let c = 0; c < 3; c++) xty[c][a] += xa * s[c][i];
      }
    }
    const ridge = RIDGE * (xtx[0] + xtx[4] + xtx[8]) + 1e-15;
    xtx[0] += ridge;
    xtx[4] += ridge;
    xtx[8] += ridge;
    const beta = [0, 1, 2].map((c) => solve3(xtx, xty[c]) ?? [0, 0, 0]);
    // Band-limited signals have few independent samples (≈ 2 × bandwidth × duration), so three
    // regressors explain a share 3/dof of any skin trace by chance alone. The fit is shrunk by
    // max(0, 1 − chance/R²): a chance fit removes nothing, a real shared artifact almost all of it.
    const dof = Math.max(6, 2 * (band.highHz - band.lowHz) * (len / sampleRateHz));
    const chance = 3 / dof;
    for (let c = 0; c < 3; c++) {
      let ss = 0;
      let fitSs = 0;
      for (let i = st; i < end; i++) {
        const fit = beta[c][0] * x[0][i] + beta[c][1] * x[1][i] + beta[c][2] * x[2][i];
        ss += s[c][i] * s[c][i];
        fitSs += fit * fit;
      }
      const r2 = ss > 0 ? Math.min(1, fitSs / ss) : 0;
      const shrink = r2 > chance ? 1 - chance / r2 : 0;
      for (let k = 0; k < 3; k++) beta[c][k] *= shrink;
    }
    for (let i = st; i < end; i++) {
      const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i - st + 0.5)) / len);
      wsum[i] += w;
      for (let c = 0; c < 3; c++) {
        const fit = beta[c][0] * x[0][i] + beta[c][1] * x[1][i] + beta[c][2] * x[2][i];
        out[c][i] += w * (s[c][i] - fit);
      }
    }
  }
  for (let c = 0; c < 3; c++) for (let i = 0; i < n; i++) out[c][i] = (wsum[i] > 1e-9 ? out[c][i] / wsum[i] : s[c][i]) + 1;
  return { r: out[0], g: out[1], b: out[2] };
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
  opts: { posOnly?: boolean } = {},
): ReferencedPulses {
  if (opts.posOnly) {
    // Only the POS pulse (the streaming beat analysis): no CHROM, no background spectrum.
    const c = hasBackground(bg) ? rejectBandLimited(skin, bandLimited(bg, sampleRateHz, band), sampleRateHz, band) : null;
    const r = c ? c.r : bandLimitedChannel(skin.r, sampleRateHz, band);
    const g = c ? c.g : bandLimitedChannel(skin.g, sampleRateHz, band);
    const b = c ? c.b : bandLimitedChannel(skin.b, sampleRateHz, band);
    const pos = unitVariance(conditionPulse(posPulse(r, g, b, sampleRateHz), sampleRateHz, band));
    return { pos, chrom: pos, noise: null };
  }
  if (!hasBackground(bg)) {
    const p = extractPulses(skin.r, skin.g, skin.b, sampleRateHz, band);
    return { pos: p.pos, chrom: p.chrom, noise: null };
  }
  const bgBand = bandLimited(bg, sampleRateHz, band);
  const c = rejectBandLimited(skin, bgBand, sampleRateHz, band);
  const pos = conditionPulse(posPulse(c.r, c.g, c.b, sampleRateHz), sampleRateHz, band);
  const chrom = conditionPulse(chromPulse(c.r, c.g, c.b, sampleRateHz, band), sampleRateHz, band);
  return { pos: unitVariance(pos), chrom: unitVariance(chrom), noise: unitVariance(backgroundPulseBandLimited(bgBand, sampleRateHz, band)) };
}
