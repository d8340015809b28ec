// Beats → RR → HRV: interval rejection (peer rule: 300–2000 ms, ≤ 25 % from the last accepted
// interval, median-seeded, confidence gate), Task Force time-domain metrics, and waveform → vitals on
// synthetic PPG with a known RR series.
import { describe, expect, it } from 'vitest';
import { waveformToVitals } from '@vitals/engine';
import { detectBeats, parabolicOffset } from '../src/beats/peaks.js';
import { rrIntervals } from '../src/beats/rr-intervals.js';
import { timeDomainHrv } from '../src/vitals/hrv.js';

function beatsFrom(rrMs: number[], t0 = 0.5): number[] {
  const t = [t0];
  for (const r of rrMs) t.push(t[t.length - 1] + r / 1000);
  return t;
}

function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

/** ~75 bpm with respiratory sinus arrhythmia (0.25 Hz, ±40 ms) and ±15 ms jitter. */
function sinusRr(count: number, seed = 7): number[] {
  const rnd = lcg(seed);
  const out: number[] = [];
  let t = 0;
  for (let i = 0; i < count; i++) {
    const r = 800 + 40 * Math.sin(2 * Math.PI * 0.25 * t) + 30 * (rnd() - 0.5);
    out.push(r);
    t += r / 1000;
  }
  return out;
}

/** Task Force metrics of `nn`; with `keep`, only kept intervals count and only adjacent kept pairs are differenced. */
function truthHrv(rr: number[], keep?: boolean[]): { sdnn: number; rmssd: number; pnn50: number } {
  const ok = (i: number): boolean => !keep || keep[i];
  const nn = rr.filter((_, i) => ok(i));
  const m = nn.reduce((a, b) => a + b, 0) / nn.length;
  const sdnn = Math.sqrt(nn.reduce((a, b) => a + (b - m) ** 2, 0) / (nn.length - 1));
  const d: number[] = [];
  for (let i = 1; i < rr.length; i++) if (ok(i) && ok(i - 1)) d.push(rr[i] - rr[i - 1]);
  return {
    sdnn,
    rmssd: Math.sqrt(d.reduce((a, b) => a + b * b, 0) / d.length),
    pnn50: (100 * d.filter((x) => Math.abs(x) > 50).length) / d.length,
  };
}

/**
 * PPG-like waveform: per beat a systolic Gaussian (σ 60 ms) at the beat time and a diastolic one
 * (σ 100 ms, 0.4×) 250 ms later, plus a 0.1 Hz baseline wander and optional white noise.
 */
function ppg(beatSec: number[], fs: number, durSec: number, noise = 0, seed = 3): Float64Array {
  const rnd = lcg(seed);
  const n = Math.round(durSec * fs);
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = i / fs;
    let v = 0.3 * Math.sin(2 * Math.PI * 0.1 * t);
    for (const b of beatSec) {
      const d = t - b;
      if (d < -0.5 || d > 1) continue;
      v += Math.exp(-(d * d) / (2 * 0.06 ** 2)) + 0.4 * Math.exp(-((d - 0.25) ** 2) / (2 * 0.1 ** 2));
    }
    x[i] = v + noise * (rnd() - 0.5) * 2;
  }
  return x;
}

describe('rrIntervals', () => {
  it('keeps intervals within 25 % of the last accepted one, seeded with the median', () => {
    const peaks = beatsFrom([800, 810, 790, 805, 815, 800]);
    const rr = rrIntervals(peaks);
    expect(Array.from(rr.accepted)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(rr.nnMs.length).toBe(6);
  });

  it('rejects an ectopic short–long pair, a missed beat and a false beat', () => {
    // normal, premature (480) + compensatory (1120), normal, missed beat (1600), normal, false beat (400 + 400), normal
    const raw = [800, 810, 480, 1120, 800, 790, 1600, 805, 400, 400, 800, 810];
    const rr = rrIntervals(beatsFrom(raw));
    expect(Array.from(rr.accepted)).toEqual([1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1]);
    expect(Array.from(rr.nnMs, Math.round)).toEqual([800, 810, 800, 790, 805, 800, 810]);
  });

  it('rejects a bad first interval (the reference starts at the median, not at the first interval)', () => {
    const rr = rrIntervals(beatsFrom([450, 800, 810, 790, 800]));
    expect(Array.from(rr.accepted)).toEqual([0, 1, 1, 1, 1]);
  });

  it('drops intervals outside 300–2000 ms', () => {
    const rr = rrIntervals(beatsFrom([250, 800, 2100, 800]));
    expect(Array.from(rr.accepted)).toEqual([0, 1, 0, 1]);
  });

  it('uses an interval only when both its beats are usable; excluded ones never become the reference', () => {
    const peaks = beatsFrom([800, 810, 1500, 805, 795]);
    const usable = [true, true, true, false, true, true];
    const rr = rrIntervals(peaks, usable);
    // interval 2 (beats 2–3) and 3 (beats 3–4) touch beat 3
    expect(Array.from(rr.accepted)).toEqual([1, 1, 0, 0, 1]);
  });
});

describe('timeDomainHrv', () => {
  it('follows the Task Force definitions on an unbroken series', () => {
    const raw = [800, 900, 845, 880, 820, 870];
    const h = timeDomainHrv(rrIntervals(beatsFrom(raw)))!;
    const t = truthHrv(raw);
    expect(h.sdnnMs).toBeCloseTo(t.sdnn, 6);
    expect(h.rmssdMs).toBeCloseTo(t.rmssd, 6);
    expect(h.pnn50Pct).toBeCloseTo(t.pnn50, 6);
    expect(h.pairCount).toBe(5);
  });

  it('differences only intervals adjacent in time (none across a rejected beat)', () => {
    // 800, 810 | ectopic 480, 1120 | 900, 910: 810 → 900 is never differenced
    const rr = rrIntervals(beatsFrom([800, 810, 480, 1120, 900, 910]));
    const h = timeDomainHrv(rr);
    expect(Array.from(rr.nnMs, Math.round)).toEqual([800, 810, 900, 910]);
    expect(h).not.toBeNull();
    expect(h!.pairCount).toBe(2);
    expect(h!.rmssdMs).toBeCloseTo(10, 6);
    expect(h!.pnn50Pct).toBe(0);
  });
});

describe('detectBeats', () => {
  it('parabolic refinement recovers the vertex of a sampled parabola', () => {
    const x = [0, 0.75, 0.75, 0];
    expect(1 + parabolicOffset(x, 1)).toBeCloseTo(1.5, 9);
    const y = Array.from({ length: 9 }, (_, i) => -((i - 4.3) ** 2));
    expect(4 + parabolicOffset(y, 4)).toBeCloseTo(4.3, 9);
  });

  it('places beats on the localisation waveform, between the feet found on the detection signal', () => {
    const fs = 30;
    const truth = beatsFrom(sinusRr(40));
    const x = ppg(truth, fs, truth[truth.length - 1] + 1);
    // Detection on a crude, shifted copy (as if band-limited); localisation on the waveform itself.
    const shifted = Float64Array.from(x, (_, i) => x[Math.max(0, i - 2)]);
    const b = detectBeats(shifted, fs, 1.25, x);
    expect(b.peakSec.length).toBe(truth.length);
    for (let k = 0; k < truth.length; k++) expect(Math.abs(b.peakSec[k] - truth[k])).toBeLessThan(0.006);
    const plain = detectBeats(shifted, fs, 1.25);
    expect(Math.abs(plain.peakSec[5] - truth[5] - 2 / fs)).toBeLessThan(0.006);
  });
});

describe('waveformToVitals HRV on synthetic PPG with a known RR series', () => {
  const fs = 30;
  const rr = sinusRr(75);
  const beats = beatsFrom(rr);
  const dur = beats[beats.length - 1] + 1;
  const t = truthHrv(rr);

  it('recovers SDNN, RMSSD and pNN50 at 30 fps', () => {
    const v = waveformToVitals(ppg(beats, fs, dur), fs);
    expect(v.hrv).not.toBeNull();
    expect(Math.abs(v.heartRate!.value - 60000 / (rr.reduce((a, b) => a + b, 0) / rr.length))).toBeLessThan(3);
    expect(Math.abs(v.hrv!.sdnnMs - t.sdnn)).toBeLessThanOrEqual(3);
    expect(Math.abs(v.hrv!.rmssdMs - t.rmssd)).toBeLessThanOrEqual(5);
    expect(Math.abs(v.hrv!.pnn50Pct - t.pnn50)).toBeLessThanOrEqual(5);
  });

  it('stays within tolerance with mild noise', () => {
    const v = waveformToVitals(ppg(beats, fs, dur, 0.03), fs);
    expect(Math.abs(v.hrv!.sdnnMs - t.sdnn)).toBeLessThanOrEqual(5);
    expect(Math.abs(v.hrv!.rmssdMs - t.rmssd)).toBeLessThanOrEqual(5);
  });

  it('rejects an ectopic beat and a missed beat', () => {
    const bad = beats.slice();
    bad[20] = bad[19] + 0.35 * (bad[21] - bad[19]); // premature beat (short–long pair)
    bad.splice(50, 1); // missed beat
    const v = waveformToVitals(ppg(bad, fs, dur), fs);
    expect(v.hrv).not.toBeNull();
    // Truth: the sinus intervals the artefacts did not touch (19, 20 around the premature beat; 49, 50 merged).
    const tk = truthHrv(
      rr,
      rr.map((_, i) => ![19, 20, 49, 50].includes(i)),
    );
    expect(v.rrIntervalsMs.length).toBe(rr.length - 4);
    expect(Math.abs(v.hrv!.sdnnMs - tk.sdnn)).toBeLessThanOrEqual(3);
    expect(Math.abs(v.hrv!.rmssdMs - tk.rmssd)).toBeLessThanOrEqual(5);
    expect(v.rrIntervalsMs.every((r) => r > 650 && r < 950)).toBe(true);
  });

  it('with a per-sample confidence, ignores intervals at unconfident beats', () => {
    const x = ppg(beats, fs, dur);
    const conf = new Float64Array(x.length).fill(1);
    // Corrupt ~6 s in the middle and mark it unconfident.
    const rnd = lcg(11);
    const from = Math.round(25 * fs);
    const to = Math.round(31 * fs);
    for (let i = from; i < to; i++) {
      x[i] += 1.5 * (rnd() - 0.5);
      conf[i] = 0;
    }
    const gated = waveformToVitals(x, fs, { confidence: conf });
    expect(gated.hrv).not.toBeNull();
    expect(gated.rrIntervalsMs.length).toBeLessThan(rr.length - 5);
    expect(Math.abs(gated.hrv!.sdnnMs - t.sdnn)).toBeLessThanOrEqual(5);
    expect(Math.abs(gated.hrv!.rmssdMs - t.rmssd)).toBeLessThanOrEqual(5);
    // A confidence array of the wrong length is ignored rather than misaligned.
    const ignored = waveformToVitals(ppg(beats, fs, dur), fs, { confidence: [1, 1, 1] });
    expect(ignored.rrIntervalsMs.length).toBeGreaterThanOrEqual(rr.length - 2);
  });
});
