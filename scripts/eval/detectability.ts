// Is the pulse there at all? A chance-corrected test of whether a set's pulse signals carry power
// at each recording's own reference heart rate, independent of any rate-picking rule.
//
// For one recording and a frequency f, the statistic is the rank of the strongest bin within
// ±HALF_WIDTH_HZ of f among the bins of the band (Welch spectrum of the chain's pulse signal,
// `raw.ppgSignal`). Chance is not 0.5: the maximum of a few bins ranks high by itself (about 0.83
// for five bins of 45), so the recording's rank at its own reference is compared with its ranks at
// the other recordings' references (those more than EXCLUDE_BPM away, so a neighbour's reference
// does not count as a hit). With a pulse present the own-reference rank is higher; without one the
// two are alike: the differences are as likely negative as positive, judged by a one-sided
// sign-flip permutation test of their mean.
import { powerSpectrum, bandBins, type Spectrum } from '../../packages/engine/src/dsp/spectrum.js';

export const BAND_HZ: [number, number] = [0.7, 2.5];
export const HALF_WIDTH_HZ = 0.1;
export const EXCLUDE_BPM = 6;
const SEGMENT_SEC = 20;

export interface DetectItem {
  pulse: ArrayLike<number>;
  sampleRateHz: number;
  referenceBpm: number;
}

export interface Detectability {
  n: number;
  /** Mean rank (0..1) of the power at each recording's own reference. */
  ownRank: number;
  /** Mean rank at the other recordings' references (more than EXCLUDE_BPM away). */
  otherRank: number;
  /** Recordings whose own-reference rank beats their mean rank at the other references. */
  ownHigher: number;
  /** One-sided p-value of the mean difference (own − other) under random signs (sign-flip test). */
  pValue: number;
}

/** Welch average of Hann-tapered SEGMENT_SEC segments with half overlap (one segment if shorter). */
export function welch(x: ArrayLike<number>, sampleRateHz: number): Spectrum {
  const seg = Math.min(x.length, Math.round(SEGMENT_SEC * sampleRateHz));
  const step = Math.max(1, Math.floor(seg / 2));
  let acc: Spectrum | null = null;
  let count = 0;
  for (let from = 0; from + seg <= x.length; from += step) {
    const s = powerSpectrum(x, sampleRateHz, seg, { from, to: from + seg });
    if (!acc) acc = { power: Float64Array.from(s.power), binHz: s.binHz, nfft: s.nfft };
    else for (let k = 0; k < s.power.length; k++) acc.power[k] += s.power[k];
    count++;
  }
  if (!acc) throw new Error('signal too short for a spectrum');
  for (let k = 0; k < acc.power.length; k++) acc.power[k] /= count;
  return acc;
}

/** Rank (share of band bins below) of the strongest bin within ±HALF_WIDTH_HZ of freqHz. */
export function rankAt(s: Spectrum, freqHz: number): number {
  const [lo, hi] = bandBins(s, BAND_HZ[0], BAND_HZ[1]);
  let near = -Infinity;
  for (let k = lo; k <= hi; k++) if (Math.abs(k * s.binHz - freqHz) <= HALF_WIDTH_HZ) near = Math.max(near, s.power[k]);
  let below = 0;
  for (let k = lo; k <= hi; k++) if (s.power[k] < near) below++;
  return below / (hi - lo + 1);
}

/**
 * One-sided sign-flip permutation test of mean(d) > 0: without a pulse the own reference is just
 * another rate, so each difference is as likely positive as negative. Exact for n ≤ 16, otherwise
 * 200,000 random sign patterns from a fixed-seed generator (reproducible).
 */
export function signFlipP(d: number[]): number {
  const n = d.length;
  if (n === 0) return NaN;
  const observed = d.reduce((a, b) => a + b, 0) - 1e-12;
  let hits = 0;
  let total = 0;
  const count = (mask: (i: number) => boolean): void => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += mask(i) ? -d[i] : d[i];
    if (sum >= observed) hits++;
    total++;
  };
  if (n <= 16) {
    for (let m = 0; m < 1 << n; m++) count((i) => ((m >> i) & 1) === 1);
    return hits / total;
  }
  let state = 0x9e3779b9;
  const bit = (): boolean => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state & 1) === 1;
  };
  for (let k = 0; k < 200_000; k++) count(() => bit());
  return (hits + 1) / (total + 1);
}

export interface DetectOutcome {
  own: number;
  other: number;
}

/** Per recording: its rank at its own reference and its mean rank at the others (null when no other is far enough). */
export function detectOutcomes(items: DetectItem[]): (DetectOutcome | null)[] {
  return items.map((it) => {
    const s = welch(it.pulse, it.sampleRateHz);
    const others = items
      .filter((o) => Math.abs(o.referenceBpm - it.referenceBpm) > EXCLUDE_BPM)
      .map((o) => rankAt(s, o.referenceBpm / 60));
    if (others.length === 0) return null;
    return { own: rankAt(s, it.referenceBpm / 60), other: others.reduce((a, b) => a + b, 0) / others.length };
  });
}

export function summarize(outcomes: (DetectOutcome | null)[]): Detectability {
  const ok = outcomes.filter((o): o is DetectOutcome => o !== null);
  const n = ok.length;
  const higher = ok.filter((o) => o.own > o.other).length;
  const mean = (f: (o: DetectOutcome) => number): number => (n ? ok.reduce((a, o) => a + f(o), 0) / n : NaN);
  return {
    n,
    ownRank: mean((o) => o.own),
    otherRank: mean((o) => o.other),
    ownHigher: higher,
    pValue: signFlipP(ok.map((o) => o.own - o.other)),
  };
}

export function detectabilityRow(label: string, d: Detectability): (string | number)[] {
  return [
    label,
    d.n,
    d.ownRank.toFixed(3),
    d.otherRank.toFixed(3),
    `${d.ownHigher}/${d.n}`,
    d.pValue < 0.001 ? '< 0.001' : d.pValue.toFixed(3),
  ];
}

export const DETECTABILITY_HEAD = [
  'recordings',
  'n',
  'rank at own reference',
  'rank at other references',
  'own higher',
  'p (sign-flip)',
];
