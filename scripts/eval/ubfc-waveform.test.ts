// The waveform-against-contact-PPG measures (ubfc-waveform.ts): the lag search finds a delayed or
// inverted copy, and a waveform that carries one subject's pulse under noise scores above that
// subject's chance level (the other subjects' PPGs) while pure noise does not.
import { describe, expect, it } from 'vitest';
import { bestLagCorrelation, waveformRows, type WaveformSubject } from './ubfc-waveform.js';

const FS = 30;
const SEC = 60;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A pulse whose rate wanders between lo and hi bpm (a slow sine), with its 2nd harmonic. */
function pulse(loBpm: number, hiBpm: number, periodSec: number): Float64Array {
  const x = new Float64Array(SEC * FS);
  let phase = 0;
  for (let i = 0; i < x.length; i++) {
    const t = i / FS;
    const bpm = loBpm + ((hiBpm - loBpm) * (1 + Math.sin((2 * Math.PI * t) / periodSec))) / 2;
    phase += (2 * Math.PI * bpm) / 60 / FS;
    x[i] = Math.sin(phase) + 0.4 * Math.sin(2 * phase);
  }
  return x;
}

function noisy(x: Float64Array, sd: number, seed: number): Float64Array {
  const r = rng(seed);
  return Float64Array.from(x, (v) => v + sd * Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r()));
}

function subject(id: string, contact: Float64Array, waveform: Float64Array): WaveformSubject {
  return {
    id,
    published: false,
    evidence: 0,
    waveform,
    sampleRateHz: FS,
    gt: { ppg: Array.from(contact), oximeterHr: [], tSec: Array.from(contact, (_, i) => i / FS) },
  };
}

describe('bestLagCorrelation', () => {
  const c = pulse(70, 90, 20);
  it('finds a copy the contact PPG runs 0.2 s behind', () => {
    const w = new Float64Array(c.length);
    for (let i = 0; i < c.length; i++) w[i] = c[Math.min(c.length - 1, i + 6)];
    const b = bestLagCorrelation(w, c, FS);
    expect(b.r).toBeGreaterThan(0.99);
    expect(b.lagSec).toBeCloseTo(0.2, 5);
  });
  it('reports an inverted copy as a negative r', () => {
    const b = bestLagCorrelation(
      Float64Array.from(c, (v) => -v),
      c,
      FS,
    );
    expect(b.r).toBeLessThan(-0.99);
  });
});

describe('waveformRows', () => {
  // Four hearts with different rate paths; each waveform is its own pulse under noise twice its SD.
  const hearts = [pulse(60, 70, 25), pulse(85, 110, 18), pulse(100, 104, 30), pulse(115, 130, 22)];
  const subjects = hearts.map((h, i) => subject(`s${i}`, h, noisy(h, 2, 10 + i)));
  const rows = waveformRows(subjects);

  it('a waveform carrying its own pulse scores above its chance level (the other PPGs)', () => {
    for (const r of rows) {
      expect(Math.abs(r.r)).toBeGreaterThan(r.rOthersMax);
      expect(r.hits).toBeGreaterThan(r.windows * r.hitShareOthers);
    }
  });

  it("the contact PPG's window rates span its own rate path", () => {
    const wide = rows[1].contactRangeBpm;
    expect(wide[0]).toBeLessThan(92);
    expect(wide[1]).toBeGreaterThan(102);
    const narrow = rows[2].contactRangeBpm;
    expect(narrow[1] - narrow[0]).toBeLessThan(8);
  });

  it('pure noise does not follow the heart it is compared with', () => {
    const r = rng(99);
    const noise = Float64Array.from({ length: SEC * FS }, () => r() - 0.5);
    const withNoise = [subject('noise', hearts[0], noise), ...subjects.slice(1)];
    const row = waveformRows(withNoise)[0];
    expect(Math.abs(row.r)).toBeLessThan(0.2);
    expect(row.hits).toBeLessThanOrEqual(row.windows / 2);
  });
});
