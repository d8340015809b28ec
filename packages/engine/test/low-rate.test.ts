import { describe, expect, it } from 'vitest';
import { estimateOffline, generatePhantom, StreamingEstimator } from '@vitals/engine';
import { chanceShare, sqiAt } from '../src/rate/hr-spectrum.js';
import { powerSpectrum } from '../src/dsp/spectrum.js';
import { minPublishSqi } from '../src/quality/quality.js';

describe('frame rates too low to resolve the heart-rate band', () => {
  it.each([1, 2, 4, 5])('degrades to poor at %i fps (streaming and offline), never throws', (fps) => {
    for (const pureNoise of [false, true]) {
      const { packets } = generatePhantom({ durationSec: 40, fps, pureNoise, seed: 90 + fps });
      const s = new StreamingEstimator();
      const events = packets.flatMap((p) => s.push(p));
      expect(events.filter((e) => e.t === 'hr')).toEqual([]);
      const m = s.finish();
      expect(m.quality.level).toBe('poor');
      expect(m.cardiac.heartRate).toBeNull();
      expect(estimateOffline(packets)).toEqual(m);
    }
  });

  it('still measures at 8 fps', () => {
    const { packets, truth } = generatePhantom({ durationSec: 40, fps: 8, heartRateBpm: 72, seed: 95 });
    const m = estimateOffline(packets);
    expect(m.quality.usable).toBe(true);
    expect(Math.abs(m.cardiac.heartRate!.value - truth.heartRateBpm)).toBeLessThanOrEqual(3.5);
  });
});

describe('SQI chance level', () => {
  it('maps band-passed white noise to a median SQI near 0 at any frame rate', () => {
    let seed = 12345;
    const rand = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff - 0.5;
    };
    for (const fs of [8, 15, 30]) {
      const n = 10 * fs;
      const sqis: number[] = [];
      for (let t = 0; t < 200; t++) {
        const x = Float64Array.from({ length: n }, rand);
        const s = powerSpectrum(x, fs, 4096);
        let best = 0;
        for (let k = Math.ceil(0.7 / s.binHz); k <= Math.floor(2.5 / s.binHz); k++)
          if (s.power[k] > s.power[best]) best = k;
        sqis.push(sqiAt(s, best * s.binHz, { lowHz: 0.7, highHz: 2.5 }, 10));
      }
      sqis.sort((a, b) => a - b);
      expect(sqis[100]).toBeLessThan(0.12);
      expect(sqis[190]).toBeLessThan(0.45); // 95th percentile
    }
    expect(chanceShare(1.8, 10)).toBeGreaterThan(0.25);
  });
});

describe('quality gate against pulse-less captures', () => {
  it('publishes nothing for short captures without a pulse (the median SQI of few windows is noisy)', () => {
    for (let k = 0; k < 8; k++) {
      const o = k % 2 ? { pureNoise: true } : { pulseAmplitude: 0 };
      const { packets } = generatePhantom({ durationSec: k < 4 ? 20 : 30, ...o, seed: 2300 + k });
      const m = estimateOffline(packets);
      expect(m.quality.usable).toBe(false);
      expect(m.cardiac.heartRate).toBeNull();
    }
  });

  it('the null threshold falls with capture length', () => {
    expect(minPublishSqi(20)).toBeGreaterThan(minPublishSqi(60));
    expect(minPublishSqi(60)).toBeGreaterThan(0.2);
  });
});
