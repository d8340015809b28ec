// Physiological pulse model for the phantom. Beat-to-beat intervals: mean interval plus
// respiratory sinus arrhythmia and a first-order autoregressive component, after the
// cardiovascular model of McSharry et al., "A dynamical model for generating synthetic
// electrocardiogram signals", IEEE TBME 50(3), 2003 (RSA at the breathing rate plus slower
// variability). Pulse shape: a systolic and a diastolic Gaussian wave per beat, the
// sum-of-Gaussians PPG model used by Tang et al., "PPGSynth", Frontiers in Physiology 11, 2020. Respiratory modulation of amplitude (RIAV) and baseline (RIIV): Karlen
// et al., IEEE TBME 60(7), 2013.
import type { Rng } from './rng.js';

export interface BeatTrain {
  /** Systolic peak times, s. */
  peakSec: Float64Array;
  /** Amplitude factor per beat (respiratory amplitude modulation). */
  amplitude: Float64Array;
}

export interface PulseModelOptions {
  durationSec: number;
  heartRateBpm: number;
  /** Standard deviation of the non-respiratory RR component, ms. */
  rrJitterMs: number;
  /** Peak-to-peak respiratory sinus arrhythmia, ms. */
  rsaMs: number;
  breathingRateBpm: number;
  /** Relative amplitude modulation by breathing (0.15 = ±15 %). */
  amplitudeModulation: number;
}

/** Beat train covering [−2 s, duration + 2 s] so the waveform has no edge gaps. */
export function generateBeats(o: PulseModelOptions, rng: Rng): BeatTrain {
  const meanRr = 60 / o.heartRateBpm;
  const fr = o.breathingRateBpm / 60;
  const peaks: number[] = [];
  const amps: number[] = [];
  let t = -2 + rng.next() * meanRr;
  let ar = 0;
  const phi = 0.7;
  const innov = (o.rrJitterMs / 1000) * Math.sqrt(1 - phi * phi);
  while (t < o.durationSec + 2) {
    peaks.push(t);
    amps.push(1 + o.amplitudeModulation * Math.sin(2 * Math.PI * fr * t));
    ar = phi * ar + innov * rng.normal();
    const rsa = (o.rsaMs / 2000) * Math.sin(2 * Math.PI * fr * t + 0.5);
    t += Math.max(0.3, meanRr + rsa + ar);
  }
  return { peakSec: Float64Array.from(peaks), amplitude: Float64Array.from(amps) };
}

function gauss(x: number, s: number): number {
  return Math.exp((-0.5 * x * x) / (s * s));
}

/** Blood-volume waveform (0 at rest, ~1 at systolic peaks) at times tSec, for a beat train. */
export function pulseWaveform(beats: BeatTrain, tSec: number, cursor: { k: number }): number {
  const p = beats.peakSec;
  while (cursor.k + 1 < p.length && p[cursor.k + 1] <= tSec) cursor.k++;
  let v = 0;
  for (let j = Math.max(0, cursor.k - 1); j <= Math.min(p.length - 1, cursor.k + 1); j++) {
    const period = j + 1 < p.length ? p[j + 1] - p[j] : 0.8;
    const d = tSec - p[j];
    // Systolic wave peaking at the beat time; diastolic wave ~0.3 periods later.
    v +=
      beats.amplitude[j] *
      (gauss(d, 0.075 * Math.min(1.2, period / 0.8)) +
        0.4 * gauss(d - 0.33 * period, 0.11 * Math.min(1.2, period / 0.8)));
  }
  return v;
}
