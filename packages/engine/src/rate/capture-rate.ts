// The capture's heart rate, in two steps.
// 1. Anchor: the peak of the capture-averaged spectrum. Every 10 s window's periodogram (1 s step)
//    is normalised to unit in-band power and the normalised spectra are averaged (Welch's method,
//    "The use of fast Fourier transform for the estimation of power spectra", IEEE Trans. Audio
//    Electroacoust. 15(2), 1967; pyVHR `BPM.py` uses the same sliding windows). The average is then
//    divided by (1 + K·r(f)/max r) for every pulse-less reference r (the background's POS pulse,
//    the crop's texture energy; pulse/background-reference.ts), so frequencies where codec pumping
//    or lighting live lose against the pulse. The anchor is the peak after a harmonic check (a bin
//    gains half of what it and its double hold above the spectrum's mean), so a clean capture whose
//    harmonic is as strong as its fundamental is not anchored on the double; then a period-doubling
//    test on the pulse itself (periodDoubling) moves the anchor to its half where the fundamental is
//    too weak for that check. A pulse that is present at the same rate for much of
//    the capture adds up coherently across windows while noise peaks land anywhere, so the average
//    finds the rate's neighbourhood even where single windows are at -10 dB.
// 2. Rate: the windows' score spectra are Viterbi-tracked (hr-track.ts) inside ±15 bpm of the
//    anchor, and the capture rate is the plain mean of the tracked window rates. The reference rate
//    of a capture is 60 / mean inter-beat interval, i.e. the average of the instantaneous rate,
//    which the mean of a tracked path estimates and a spectral peak (the mode) does not when the
//    rate drifts.
// Measured on the ubfc2 recordings (docs/accuracy.md): the anchor removes the locks onto codec
// pumping at ~1 Hz that a free tracker falls into when the pulse is weak for a stretch.
import { powerSpectrum } from '../dsp/spectrum.js';
import {
  bandObservable,
  HARMONIC_CREDIT,
  HR_BAND,
  hrWindow,
  refineRateHz,
  scoreSpectra,
  type HrBand,
  type HrWindow,
} from './hr-spectrum.js';
import { viterbiPath } from './hr-track.js';
import { HR_STEP_SEC, HR_WINDOW_SEC, hrNfft, type HrTrack } from './track-heart-rate.js';

/** How strongly the averaged spectrum is down-weighted where a reference carries power. */
export const CAPTURE_REFERENCE_PENALTY = 4;
/** Half-width of the tracking corridor around the anchor, bpm. */
export const CAPTURE_CORRIDOR_BPM = 15;

export interface CaptureRate {
  /** Mean of the tracked window rates, bpm; NaN when the capture is too short for one window. */
  hrBpm: number;
  /** Peak of the reference-weighted averaged spectrum, bpm (NaN likewise). */
  anchorBpm: number;
  windowHrBpm: Float64Array;
  windowSqi: Float64Array;
  /**
   * Share of the reference-weighted averaged spectrum within ±ANCHOR_SHARE_HALF_WIDTH_HZ of the
   * anchor (0..1; NaN likewise): how much the windows agree on one rate, the capture-level
   * evidence of a pulse (quality.ts tests it against pulse-less captures).
   */
  anchorShare: number;
  /** The period-doubling test moved the anchor from its peak to the peak's half (periodDoubling). */
  halved: boolean;
}

/** Half-width of the anchor's neighbourhood counted by `anchorShare`. */
export const ANCHOR_SHARE_HALF_WIDTH_HZ = 0.1;

const NONE: CaptureRate = {
  hrBpm: NaN,
  anchorBpm: NaN,
  windowHrBpm: new Float64Array(0),
  windowSqi: new Float64Array(0),
  anchorShare: NaN,
  halved: false,
};

/**
 * The period-doubling test's thresholds (periodDoubling): the anchor f moves to f/2 only when
 * f/2 and f are phase-locked (coupling ≥ PERIOD_DOUBLING_COUPLING) and the pulse repeats clearly
 * better every 2/f than every 1/f (autocorrelation gain ≥ PERIOD_DOUBLING_AC_GAIN). Clean phantoms
 * anchored on their double: coupling 0.96–0.99, gain 0.41–0.72; ubfc2 captures (every 20–60 s part,
 * both paths) anchored at their rate: coupling ≤ 0.79, and ≤ 0.59 where the gain exceeds 0.3.
 */
export const PERIOD_DOUBLING_COUPLING = 0.85;
export const PERIOD_DOUBLING_AC_GAIN = 0.3;

/**
 * Adds one Hann-windowed segment x[s..s+wl) to the coupling sums acc = [Re, Im, norm] of
 * X₂·conj(X₁)² and |X₂|·|X₁|², X₁ and X₂ its Fourier coefficients at f/2 and f (f in cycles per
 * sample).
 */
export function addCoupling(acc: Float64Array, x: Float64Array, s: number, wl: number, f: number): void {
  let a1r = 0;
  let a1i = 0;
  let a2r = 0;
  let a2i = 0;
  // Phasors by rotation (no trigonometry per sample): e^{iπf(s+t)} for f/2, and the Hann window's
  // cos(2π(t + ½)/wl).
  const w = Math.PI * f;
  let c = Math.cos(w * s);
  let sn = Math.sin(w * s);
  const dc = Math.cos(w);
  const ds = Math.sin(w);
  const hw = (2 * Math.PI) / wl;
  let hc = Math.cos(hw / 2);
  let hs = Math.sin(hw / 2);
  const hdc = Math.cos(hw);
  const hds = Math.sin(hw);
  for (let t = 0; t < wl; t++) {
    const v = (0.5 - 0.5 * hc) * x[s + t];
    a1r += v * c;
    a1i -= v * sn;
    a2r += v * (c * c - sn * sn);
    a2i -= v * 2 * c * sn;
    const c1 = c * dc - sn * ds;
    sn = sn * dc + c * ds;
    c = c1;
    const h1 = hc * hdc - hs * hds;
    hs = hs * hdc + hc * hds;
    hc = h1;
  }
  // conj(X₁)² = (a1r² − a1i²) − 2i·a1r·a1i.
  const cr = a1r * a1r - a1i * a1i;
  const ci = -2 * a1r * a1i;
  acc[0] += a2r * cr - a2i * ci;
  acc[1] += a2r * ci + a2i * cr;
  acc[2] += Math.hypot(a2r, a2i) * (a1r * a1r + a1i * a1i);
}

/** The coupling of sums made by addCoupling (0..1). */
export function coupling(acc: Float64Array): number {
  return acc[2] > 0 ? Math.hypot(acc[0], acc[1]) / acc[2] : 0;
}

/** Normalised correlation of x[t] and x[t + lag] over t in [from, to) (fractional lag, linear). */
export function lagCorrelation(x: Float64Array, from: number, to: number, lag: number): number {
  const li = Math.floor(lag);
  const fr = lag - li;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let t = from; t + li + 1 < to; t++) {
    const y = x[t + li] * (1 - fr) + x[t + li + 1] * fr;
    sxy += x[t] * y;
    sxx += x[t] * x[t];
    syy += y * y;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : 0;
}

/**
 * Evidence that a pulse anchored at fHz is really at fHz/2 with a strong 2nd harmonic (a period
 * doubling test, as pitch detectors use). Two statistics of the pulse itself, free of the
 * references that weight the averaged spectrum:
 * - `coupling`: the phase coupling of f/2 and f, |Σ X₂·conj(X₁)²| / Σ |X₂|·|X₁|² over Hann windows of
 *   three periods of f/2 (half overlap), X₁ and X₂ the windows' Fourier coefficients at f/2 and f
 *   (the bicoherence of f/2 with itself; Kim & Powers, IEEE Trans. Plasma Sci. 7(2), 1979). A
 *   fundamental and its harmonic keep their phase relation whatever the rate does; noise at f/2
 *   beside a pulse at f does not (1 for a locked pair, ~1/√windows for independent ones).
 * - `acGain`: the mean over the 10 s windows ending at `ends` of the pulse's autocorrelation at lag
 *   2/f minus that at lag 1/f. A pulse at f repeats every 1/f (variability lowers the longer lag);
 *   one at f/2 repeats only every 2/f, alternate "beats" differ and the gain is about twice the
 *   share of the power at f/2.
 */
export function periodDoubling(
  pulse: Float64Array,
  sampleRateHz: number,
  fHz: number,
  ends: number[],
  len: number,
): { coupling: number; acGain: number } {
  const wl = Math.round((3 * sampleRateHz) / (fHz / 2));
  const acc = new Float64Array(3);
  for (let s = 0; s + wl <= pulse.length; s += Math.max(1, wl >> 1)) addCoupling(acc, pulse, s, wl, fHz / sampleRateHz);
  let gain = 0;
  for (const end of ends) {
    gain +=
      lagCorrelation(pulse, end - len, end, (2 * sampleRateHz) / fHz) -
      lagCorrelation(pulse, end - len, end, sampleRateHz / fHz);
  }
  return { coupling: coupling(acc), acGain: ends.length ? gain / ends.length : 0 };
}

/** Adds x's normalised in-band periodogram over [from, to) to acc (bins lo..lo+acc.length-1). */
function addNormalised(acc: Float64Array, power: Float64Array, lo: number): void {
  let total = 0;
  for (let i = 0; i < acc.length; i++) total += power[lo + i];
  if (!(total > 0)) return;
  for (let i = 0; i < acc.length; i++) acc[i] += power[lo + i] / total;
}

/**
 * The anchor's candidate score: each bin of the reference-weighted average plus half of what it
 * and its double both hold above the average's in-band mean (hr-spectrum.ts's harmonic check,
 * HARMONIC_CREDIT, capped at the bin's own power as there). A fundamental gains up to half again
 * from a harmonic that is a peak; broadband power is no evidence of a harmonic: without the floor,
 * on a broad spectrum every bin below half the band's top gained ×1.5 and bins above (whose double
 * is out of band) nothing, which moved ubfc2 subject 10 (110 bpm) to 51. A double above the band
 * counts as 0, so a sub-harmonic ghost gains no more than its own excess.
 */
export function harmonicCredited(avg: Float64Array, lo: number): Float64Array {
  const out = new Float64Array(avg.length);
  let floor = 0;
  for (let i = 0; i < avg.length; i++) floor += avg[i] / avg.length;
  for (let i = 0; i < avg.length; i++) {
    const j = 2 * (lo + i) - lo;
    const h = j < avg.length ? avg[j] : 0;
    out[i] = avg[i] + HARMONIC_CREDIT * Math.max(0, Math.min(h, avg[i]) - floor);
  }
  return out;
}

export function captureHeartRate(
  pulse: Float64Array,
  sampleRateHz: number,
  opts: {
    band?: HrBand;
    references?: Float64Array[];
    windowSec?: number;
    stepSec?: number;
    /**
     * A whole-band track of the same capture (trackHeartRate over [pulse, ...] with `references[0]`
     * as its noise, same window and step): its window spectra are reused instead of recomputed.
     */
    track?: HrTrack;
    /** Pick the anchor after the harmonic check (harmonicCredited); default true. */
    harmonicCheck?: boolean;
    /** Move the anchor to its half when the period-doubling test says so (periodDoubling); default true. */
    periodCheck?: boolean;
  } = {},
): CaptureRate {
  const band = opts.band ?? HR_BAND;
  const refs = opts.references ?? [];
  const n = pulse.length;
  const stepSec = opts.stepSec ?? HR_STEP_SEC;
  let len = Math.round((opts.windowSec ?? HR_WINDOW_SEC) * sampleRateHz);
  const step = Math.max(1, Math.round(stepSec * sampleRateHz));
  if (n < len) len = n;
  if (len < Math.round(4 * sampleRateHz) || len < 8 || !bandObservable(band, sampleRateHz)) return NONE;
  const nfft = hrNfft(len, sampleRateHz);
  const track = opts.track && opts.track.windowLen === len && opts.track.windows.length ? opts.track : null;
  let ends: number[];
  let windows: HrWindow[];
  if (track) {
    // Same windows as the track: its first method's spectrum is this pulse's, its noise spectrum refs[0]'s.
    ends = Array.from(track.windowEnd);
    windows = track.windows.map((w) => scoreSpectra([w.spectra[0]], w.noiseSpectrum, w.windowSec, band));
  } else {
    ends = [];
    for (let end = len; end <= n; end += step) ends.push(end);
    if (ends[ends.length - 1] < n) ends.push(n);
    windows = ends.map((end) => hrWindow([pulse], end - len, end, sampleRateHz, nfft, band, refs[0] ?? null));
  }
  const { lo, states } = windows[0];
  const avg = new Float64Array(states);
  for (const w of windows) addNormalised(avg, w.spectra[0].power, lo);
  refs.forEach((r, k) => {
    const ra = new Float64Array(states);
    for (let i = 0; i < ends.length; i++) {
      const reuse = k === 0 ? windows[i].noiseSpectrum : null;
      addNormalised(
        ra,
        (reuse ?? powerSpectrum(r, sampleRateHz, nfft, { from: ends[i] - len, to: ends[i] })).power,
        lo,
      );
    }
    let peak = 0;
    for (let i = 0; i < states; i++) peak = Math.max(peak, ra[i]);
    if (peak > 0) for (let i = 0; i < states; i++) avg[i] /= 1 + (CAPTURE_REFERENCE_PENALTY * ra[i]) / peak;
  });
  // The anchor is picked after the harmonic check: a clean phantom's band-limited pulse at 45–55
  // bpm has its 2nd harmonic at 0.5–1.5× the fundamental's power (the 0.7 Hz band edge attenuates
  // the fundamental), and the references' noise-level humps (each divides a bin by up to 5) can
  // sit on the fundamental, so a plain peak went to the double (docs/decisions.md, Engine).
  const credited = (opts.harmonicCheck ?? true) ? harmonicCredited(avg, lo) : avg;
  let anchor = 0;
  for (let i = 1; i < states; i++) if (credited[i] > credited[anchor]) anchor = i;
  // The harmonic check cannot tell a clean pulse at 45–50 bpm whose fundamental the band edge and
  // the references cut to a fraction of its harmonic (docs/decisions.md, Engine): the pulse's own
  // waveform can. When the test finds a period twice the anchor's, the anchor is the credited
  // peak within ANCHOR_SHARE_HALF_WIDTH_HZ of its half.
  let halved = false;
  const halfBin = (lo + anchor) / 2 - lo;
  if ((opts.periodCheck ?? true) && halfBin >= 0) {
    const d = periodDoubling(pulse, sampleRateHz, (lo + anchor) * windows[0].binHz, ends, len);
    if (d.coupling >= PERIOD_DOUBLING_COUPLING && d.acGain >= PERIOD_DOUBLING_AC_GAIN) {
      const reach = Math.round(ANCHOR_SHARE_HALF_WIDTH_HZ / windows[0].binHz);
      const from = Math.max(0, Math.ceil(halfBin - reach));
      const to = Math.min(states - 1, Math.floor(halfBin + reach));
      if (from <= to) {
        anchor = from;
        for (let i = from + 1; i <= to; i++) if (credited[i] > credited[anchor]) anchor = i;
        halved = true;
      }
    }
  }
  const binBpm = windows[0].binHz * 60;
  const half = Math.round(CAPTURE_CORRIDOR_BPM / binBpm);
  const path = viterbiPath(windows, stepSec, {
    from: Math.max(0, anchor - half),
    to: Math.min(states - 1, anchor + half),
  });
  const hr = new Float64Array(windows.length);
  const sqi = new Float64Array(windows.length);
  let sum = 0;
  for (let i = 0; i < windows.length; i++) {
    const r = refineRateHz(windows[i], lo + path[i]);
    hr[i] = r.freqHz * 60;
    sqi[i] = r.sqi;
    sum += hr[i];
  }
  const halfShare = Math.round(ANCHOR_SHARE_HALF_WIDTH_HZ / windows[0].binHz);
  let near = 0;
  let total = 0;
  for (let i = 0; i < states; i++) {
    total += avg[i];
    if (Math.abs(i - anchor) <= halfShare) near += avg[i];
  }
  return {
    hrBpm: sum / windows.length,
    anchorBpm: (lo + anchor) * binBpm,
    windowHrBpm: hr,
    windowSqi: sqi,
    anchorShare: total > 0 ? near / total : 0,
    halved,
  };
}
