// The speed-ups of the signal kernels must not change a bit: each fast form is compared, with
// Object.is on every value, against the plain form it replaced (written out here as the reference).
import { describe, expect, it } from 'vitest';
import { bandPassZeroPhase } from '../src/dsp/butterworth.js';
import { decimateMean, medianIntervalMicros, resampleDecimated, resampleUniform } from '../src/dsp/resample.js';
import { bandLimitedChannel, REST_BAND } from '../src/pulse/pulse-signals.js';
import type { HrWindow } from '../src/rate/hr-spectrum.js';
import { viterbiStep, type ForwardState, type StateRange } from '../src/rate/hr-track.js';

function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 4294967296;
}

function sameBits(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/** The Viterbi forward step as a single loop over each state's predecessors (the reference). */
function plainStep(
  prev: ForwardState | null,
  w: HrWindow,
  stepSec: number,
  back?: Int32Array,
  range?: StateRange,
): ForwardState {
  const emission = (i: number): number =>
    range && (i < range.from || i > range.to) ? -Infinity : Math.log(w.score[i] + 1e-4);
  const out = new Float64Array(w.states);
  const binBpm = w.binHz * 60;
  const sigma = 4 * Math.sqrt(Math.max(0.25, stepSec));
  const maxJump = Math.max(1, Math.round((15 * Math.max(1, stepSec)) / binBpm));
  const c = 1 / (2 * (sigma / binBpm) ** 2);
  if (!prev || prev.lo !== w.lo || prev.logDelta.length !== w.states) {
    for (let i = 0; i < w.states; i++) out[i] = emission(i);
    if (back) back.fill(-1);
    return { lo: w.lo, logDelta: out };
  }
  const first = range ? Math.max(0, range.from) : 0;
  const last = range ? Math.min(w.states - 1, range.to) : w.states - 1;
  if (range) {
    out.fill(-Infinity);
    if (back) back.fill(-1);
  }
  for (let i = first; i <= last; i++) {
    let best = -Infinity;
    let arg = i;
    for (let j = Math.max(first, i - maxJump); j <= Math.min(last, i + maxJump); j++) {
      const d = i - j;
      const v = prev.logDelta[j] - c * d * d;
      if (v > best) {
        best = v;
        arg = j;
      }
    }
    out[i] = best + emission(i);
    if (back) back[i] = arg;
  }
  let m = -Infinity;
  for (let i = 0; i < out.length; i++) if (out[i] > m) m = out[i];
  for (let i = 0; i < out.length; i++) out[i] -= m;
  return { lo: w.lo, logDelta: out };
}

describe('signal kernels are bit-identical to their plain forms', () => {
  it('Viterbi step: same vector and back-pointers (ties, NaN scores, confined ranges)', () => {
    const rnd = rng(7);
    for (let trial = 0; trial < 400; trial++) {
      const states = 1 + Math.floor(rnd() * 260);
      const binHz = [0.00977, 0.0147, 0.0293, 0.3][trial % 4];
      const window = (): HrWindow => {
        const score = new Float64Array(states);
        for (let i = 0; i < states; i++) {
          const kind = trial % 5;
          score[i] =
            kind === 0
              ? rnd()
              : kind === 1
                ? Math.exp(-((i - states / 2) ** 2) / 50)
                : kind === 2
                  ? Math.round(rnd() * 3) / 7
                  : kind === 3
                    ? 1
                    : i % 7
                      ? rnd()
                      : NaN;
        }
        return { lo: 10, states, binHz, score } as unknown as HrWindow;
      };
      const range =
        trial % 3 === 0
          ? {
              from: Math.floor((rnd() * states) / 2) - 2,
              to: Math.floor(states / 2 + (rnd() * states) / 2) + 1,
            }
          : undefined;
      const w0 = window();
      let fast = viterbiStep(null, w0, 1, undefined, range);
      let plain = plainStep(null, w0, 1, undefined, range);
      for (let step = 0; step < 4; step++) {
        const w = window();
        const stepSec = [1, 0.5, 2, 3][step];
        const bf = step % 2 ? undefined : new Int32Array(states);
        const bp = step % 2 ? undefined : new Int32Array(states);
        fast = viterbiStep(fast, w, stepSec, bf, range);
        plain = plainStep(plain, w, stepSec, bp, range);
        expect(sameBits(fast.logDelta, plain.logDelta)).toBe(true);
        if (bf && bp) expect(Array.from(bf)).toEqual(Array.from(bp));
      }
    }
  });

  it('median interval by selection equals the median of the sorted intervals', () => {
    const rnd = rng(3);
    for (let trial = 0; trial < 2000; trial++) {
      const n = 2 + Math.floor(rnd() * 80);
      const t = [0];
      for (let i = 1; i < n; i++)
        t.push(t[i - 1] + [33333 + Math.floor(rnd() * 2), rnd() * 1000, 5, Math.floor(rnd() * 4) * 10][trial % 4]);
      const d = Float64Array.from({ length: n - 1 }, (_, i) => t[i + 1] - t[i]).sort();
      const m = (n - 1) >> 1;
      const expected = (n - 1) % 2 ? d[m] : 0.5 * (d[m - 1] + d[m]);
      expect(Object.is(medianIntervalMicros(t, 0, n), expected)).toBe(true);
    }
  });

  it('resampling with boxcar decimation equals resampleUniform then decimateMean', () => {
    const rnd = rng(5);
    for (const factor of [2, 3, 4]) {
      const n = 400;
      const t = [0];
      for (let i = 1; i < n; i++) t.push(t[i - 1] + 33333 + Math.floor(rnd() * 3000) * (i % 17 === 0 ? 10 : 1));
      const chans = [0, 1, 2].map(() => Float64Array.from({ length: n }, () => 100 + 20 * rnd()));
      const from = 37;
      const fast = resampleDecimated(t, chans, 30, factor, { from, to: n });
      const plain = resampleUniform(t, chans, 30, { from, to: n }).channels.map((c) => decimateMean(c, factor));
      for (let c = 0; c < 3; c++) expect(sameBits(fast[c], plain[c])).toBe(true);
    }
  });

  it('band-limited channel equals moving-mean normalisation then the zero-phase band-pass', () => {
    const rnd = rng(9);
    for (const [n, fs] of [
      [100, 10],
      [450, 15],
      [1800, 30],
      [2, 10],
      [1, 10],
    ]) {
      const c = Float64Array.from({ length: n }, (_, i) => 120 + 10 * Math.sin(i / 7) + rnd());
      const len = Math.max(3, Math.round(10 * fs));
      // The moving mean from prefix sums, as movingAverage computes it, then the normalisation.
      const pre = new Float64Array(n + 1);
      for (let k = 0; k < n; k++) pre[k + 1] = pre[k] + c[k];
      const x = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const a = Math.max(0, i - (len >> 1));
        const b = Math.min(n, i + (len >> 1) + 1);
        const m = (pre[b] - pre[a]) / (b - a);
        x[i] = m > 0 ? c[i] / m - 1 : 0;
      }
      const f = bandPassZeroPhase(x, fs, REST_BAND.lowHz, Math.min(REST_BAND.highHz, 0.45 * fs));
      const plain = f.map((v) => v + 1);
      expect(sameBits(bandLimitedChannel(c, fs, REST_BAND), plain)).toBe(true);
      expect(
        sameBits(
          bandLimitedChannel(c, fs, REST_BAND, new Float64Array(n + 5), true),
          plain.map((v) => v - 1),
        ),
      ).toBe(true);
    }
  });
});
