// Is the pulse in the crops? The chain's published waveform (`raw.ppgSignal`) of each labelled
// ubfc2 video against that subject's contact PPG (finger oximeter, ground_truth.txt line 1), whatever
// the quality gate decided: the Pearson correlation of the two waveforms (rPPG's usual waveform
// measure) and, per 10 s window, whether the waveform's spectral peak sits on the contact PPG's.
// Each figure comes with its chance level: the same statistic against the other subjects' contact
// PPGs, which share the band and the recording protocol but not this subject's heart.
import { bandPassZeroPhase } from '../../packages/engine/src/dsp/butterworth.js';
import { powerSpectrum } from '../../packages/engine/src/dsp/spectrum.js';
import { REST_BAND } from '../../packages/engine/src/pulse/pulse-signals.js';
import type { GroundTruth } from './ubfc2-hrv.js';
import { fmt, table } from './common.js';
import type { HeadlineRow } from '../headline.js';

export interface WaveformSubject {
  id: string;
  published: boolean;
  evidence: number;
  /** The chain's waveform (`raw.ppgSignal`) and its sample rate. */
  waveform: ArrayLike<number>;
  sampleRateHz: number;
  gt: GroundTruth;
}

/** Lags searched for the face-to-finger delay (either sign): up to this many seconds. */
export const MAX_LAG_SEC = 1;
/** Window length and step for the per-window peaks, seconds. */
const WINDOW_SEC = 10;
const STEP_SEC = 5;
/** A window's peak is "at" the contact rate within this, Hz (±6 bpm). */
const HIT_HZ = 0.1;

const lowHz = REST_BAND.lowHz;
const highHz = REST_BAND.highHz;

/**
 * The contact PPG, one sample per video frame (the dataset logs one per frame), band-passed like
 * the waveform. The chain's waveform is resampled at the median frame interval from the first
 * frame, so sample i of each is frame i (the ubfc2 clips have a face in every frame).
 */
function contactOnFrames(gt: GroundTruth, fs: number): Float64Array {
  const x = Float64Array.from(gt.ppg, (v) => (Number.isFinite(v) ? v : 0));
  let m = 0;
  for (const v of x) m += v;
  m /= x.length || 1;
  for (let i = 0; i < x.length; i++) x[i] -= m;
  return bandPassZeroPhase(x, fs, lowHz, highHz);
}

function pearson(a: ArrayLike<number>, b: ArrayLike<number>, aFrom: number, bFrom: number, n: number): number {
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[aFrom + i];
    mb += b[bFrom + i];
  }
  ma /= n;
  mb /= n;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[aFrom + i] - ma;
    const y = b[bFrom + i] - mb;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa > 0 && bb > 0 ? ab / Math.sqrt(aa * bb) : 0;
}

/** The largest |r| over lags of ±MAX_LAG_SEC (either signal first) and its lag, seconds. */
export function bestLagCorrelation(
  w: ArrayLike<number>,
  c: ArrayLike<number>,
  fs: number,
): { r: number; lagSec: number } {
  const maxLag = Math.round(MAX_LAG_SEC * fs);
  const n = Math.min(w.length, c.length) - maxLag;
  let best = { r: 0, lagSec: 0 };
  if (n < 4 * fs) return best;
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    // lag > 0: the contact PPG runs `lag` samples behind the waveform.
    const r = lag >= 0 ? pearson(w, c, 0, lag, n) : pearson(w, c, -lag, 0, n);
    if (Math.abs(r) > Math.abs(best.r)) best = { r, lagSec: lag / fs };
  }
  return best;
}

/** The in-band spectral peak (Hz) of each 10 s window, one every 5 s, over the first n samples. */
function windowPeaks(x: ArrayLike<number>, fs: number, n: number): number[] {
  const len = Math.round(WINDOW_SEC * fs);
  const step = Math.round(STEP_SEC * fs);
  const out: number[] = [];
  for (let s = 0; s + len <= n; s += step) {
    const sp = powerSpectrum(x, fs, 4096, { from: s, to: s + len });
    const lo = Math.ceil(lowHz / sp.binHz);
    const hi = Math.floor(highHz / sp.binHz);
    let k = lo;
    for (let j = lo; j <= hi; j++) if (sp.power[j] > sp.power[k]) k = j;
    out.push(k * sp.binHz);
  }
  return out;
}

function hits(a: number[], b: number[]): number {
  let h = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (Math.abs(a[i] - b[i]) <= HIT_HZ + 1e-9) h++;
  return h;
}

const median = (xs: number[]): number => {
  const s = xs.slice().sort((p, q) => p - q);
  return s.length ? (s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

export interface WaveformRow {
  id: string;
  published: boolean;
  r: number;
  lagSec: number;
  /** |r| against the other subjects' contact PPGs: median and largest. */
  rOthersMedian: number;
  rOthersMax: number;
  windows: number;
  hits: number;
  /** Share of windows on another subject's contact rate, median over the others. */
  hitShareOthers: number;
  contactRangeBpm: [number, number];
}

export function waveformRows(subjects: WaveformSubject[]): WaveformRow[] {
  const contact = subjects.map((s) => contactOnFrames(s.gt, s.sampleRateHz));
  return subjects.map((s, i) => {
    const fs = s.sampleRateHz;
    const own = bestLagCorrelation(s.waveform, contact[i], fs);
    const n = Math.min(s.waveform.length, contact[i].length);
    const wp = windowPeaks(s.waveform, fs, n);
    const cp = windowPeaks(contact[i], fs, n);
    const others = contact.filter((_, j) => j !== i);
    const rOthers = others.map((c) => Math.abs(bestLagCorrelation(s.waveform, c, fs).r));
    const hitOthers = others.map((c) => {
      const m = Math.min(n, c.length);
      const a = windowPeaks(s.waveform, fs, m);
      return a.length ? hits(a, windowPeaks(c, fs, m)) / a.length : 0;
    });
    const bpm = cp.map((f) => 60 * f);
    return {
      id: s.id,
      published: s.published,
      r: own.r,
      lagSec: own.lagSec,
      rOthersMedian: median(rOthers),
      rOthersMax: Math.max(...rOthers),
      windows: wp.length,
      hits: hits(wp, cp),
      hitShareOthers: median(hitOthers),
      contactRangeBpm: [Math.min(...bpm), Math.max(...bpm)],
    };
  });
}

/** The section's markdown (a subsection of "UBFC-rPPG videos end to end") and its headline row. */
export function waveformSection(subjects: WaveformSubject[]): { markdown: string; headline: HeadlineRow | null } {
  if (subjects.length < 2) return { markdown: '', headline: null };
  const rows = waveformRows(subjects);
  const follows = (r: WaveformRow): boolean => Math.abs(r.r) > r.rOthersMax;
  const withheld = rows.filter((r) => !r.published);
  const spread = (r: WaveformRow): number => r.contactRangeBpm[1] - r.contactRangeBpm[0];
  // Two ways a pulse that is there goes unseen (thresholds for the wording only, not for any decision).
  const moving = withheld.filter((r) => r.hits >= 0.75 * r.windows && spread(r) >= 15);
  const sparse = withheld.filter((r) => r.hits < 0.5 * r.windows);
  const why: string[] = [];
  if (moving.length)
    why.push(
      `a rate that moves (${moving.map((r) => `${r.id}: on the contact rate in ${r.hits}/${r.windows} windows, which range over ${fmt(spread(r), 0)} bpm`).join('; ')}) spreads the second`,
    );
  if (sparse.length)
    why.push(
      `a pulse on the rate in fewer than half the windows (${sparse.map((r) => `${r.id} ${r.hits}/${r.windows}`).join(', ')}) weakens both`,
    );
  const markdown = [
    '### Is the pulse in the crops? The waveform against the contact PPG',
    '',
    `The chain's published waveform (\`raw.ppgSignal\`, computed whatever the gate decides) of each labelled video against the subject's own contact PPG (finger oximeter, one sample per frame, band-passed like the waveform, ${fmt(60 * lowHz, 0)}–${fmt(60 * highHz, 0)} bpm): the Pearson correlation, its largest |r| over lags within ±${MAX_LAG_SEC} s (the delay between the face's and the finger's pulse is not known for this setup, and a search longer than a beat also picks the sign), and, per 10 s window every 5 s, whether the waveform's spectral peak is within 6 bpm of the contact PPG's. Chance level for each: the same statistic against the other ${rows.length - 1} subjects' contact PPGs (same band, same protocol, the same search, another heart).`,
    '',
    table(
      [
        'subject',
        'published',
        'evidence score',
        '\\|r\\| with own contact PPG',
        "\\|r\\| with the others' PPGs: median (max)",
        "windows on own contact PPG's rate",
        "on the others' rates: median share",
        'contact PPG window rates, bpm',
      ],
      rows.map((r, i) => [
        r.id,
        r.published ? 'yes' : '–',
        fmt(subjects[i].evidence, 2),
        fmt(Math.abs(r.r), 2),
        `${fmt(r.rOthersMedian, 2)} (${fmt(r.rOthersMax, 2)})`,
        `${r.hits}/${r.windows}`,
        `${fmt(100 * r.hitShareOthers, 0)} %`,
        `${fmt(r.contactRangeBpm[0], 0)}–${fmt(r.contactRangeBpm[1], 0)}`,
      ]),
    ),
    '',
    `The waveform follows the subject's own heart (|r| above its largest against any other subject's PPG) in ${rows.filter(follows).length} of ${rows.length} videos, ${withheld.filter(follows).length} of the ${withheld.length} withheld among them. Where the gate withholds, the pulse is in the crops; what is missing is evidence a capture shows without a contact sensor. The gate weighs how sharp the windows' peaks are and how much of the capture's power sits at one rate${why.length ? `: ${why.join(', and ')}.` : '.'} The withheld subjects' evidence stays inside the pulse-less captures' range whatever was tried on these crops (docs/decisions.md, "No new pulse evidence joins the gate").`,
    '',
  ].join('\n');
  const headline: HeadlineRow = {
    area: 'UBFC-rPPG videos end to end',
    figure: "the chain's waveform follows the subject's own contact PPG, whatever the gate decides",
    value: `${rows.filter(follows).length}/${rows.length} (withheld: ${withheld.filter(follows).length}/${withheld.length}); median |r| ${fmt(median(rows.map((r) => Math.abs(r.r))), 2)}`,
    target: '–',
    met: null,
    reference: `|r| above its largest with any other subject's contact PPG (their median ${fmt(median(rows.map((r) => r.rOthersMedian)), 2)})`,
    command: '`npm run eval`',
  };
  return { markdown, headline };
}
