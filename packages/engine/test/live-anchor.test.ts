import { describe, expect, it } from 'vitest';
import { hrWindow } from '../src/rate/hr-spectrum.js';
import { LiveAnchor } from '../src/rate/live-anchor.js';
import { hrNfft } from '../src/rate/track-heart-rate.js';

const fs = 10;
const len = 10 * fs;
function tone(hz: number, phase: number, amp = 1): Float64Array {
  return Float64Array.from({ length: len }, (_, i) => amp * Math.sin(2 * Math.PI * hz * (i / fs) + phase));
}
function add(a: Float64Array, b: Float64Array): Float64Array {
  return Float64Array.from(a, (v, i) => v + b[i]);
}

describe('LiveAnchor (the capture-rate anchor kept online)', () => {
  it('is NaN before any window, then sits at the rate the windows share from the first one', () => {
    const a = new LiveAnchor();
    expect(a.anchorBpm()).toBeNaN();
    a.add(hrWindow([tone(1.2, 0)], 0, len, fs, hrNfft(len, fs)));
    expect(Math.abs(a.anchorBpm() - 72)).toBeLessThanOrEqual(1);
    for (let k = 1; k < 5; k++) a.add(hrWindow([tone(1.2, k)], 0, len, fs, hrNfft(len, fs)));
    expect(Math.abs(a.anchorBpm() - 72)).toBeLessThanOrEqual(1);
  });

  it('a stronger peak in a few windows does not move it; the shared rate wins', () => {
    const a = new LiveAnchor();
    for (let k = 0; k < 30; k++) {
      const x = k % 6 === 0 ? add(tone(1.2, k, 0.5), tone(1.9, k, 3)) : tone(1.2, k);
      a.add(hrWindow([x], 0, len, fs, hrNfft(len, fs)));
    }
    expect(Math.abs(a.anchorBpm() - 72)).toBeLessThanOrEqual(1);
  });

  it('down-weights a peak the pulse-less background shares (codec pumping, lighting)', () => {
    const a = new LiveAnchor();
    for (let k = 0; k < 30; k++) {
      // The face carries the pulse at 1.5 Hz under a stronger 1 Hz artefact that the background also has.
      const face = add(tone(1.5, k, 1), tone(1.0, k, 1.3));
      const background = tone(1.0, k, 1);
      a.add(hrWindow([face], 0, len, fs, hrNfft(len, fs), undefined, background));
    }
    expect(Math.abs(a.anchorBpm() - 90)).toBeLessThanOrEqual(1);
  });

  it('moves to the half of its peak when the windows show twice its period (period-doubling test)', () => {
    // A pulse at 0.8 Hz (48 bpm) whose 2nd harmonic holds twice its power, rate and phase wandering:
    // the peak is the double, and the two are phase-locked.
    const withPulse = new LiveAnchor();
    const spectraOnly = new LiveAnchor();
    let phase = 0;
    for (let k = 0; k < 20; k++) {
      phase += 2.1 + 0.3 * Math.sin(k);
      const hz = 0.8 + 0.02 * Math.sin(k / 3);
      const x = add(tone(hz, phase), tone(2 * hz, 2 * phase + 0.7, Math.SQRT2));
      const win = hrWindow([x], 0, len, fs, hrNfft(len, fs));
      withPulse.add(win, x, fs);
      spectraOnly.add(win);
    }
    expect(Math.abs(spectraOnly.anchorBpm() - 96)).toBeLessThanOrEqual(2);
    expect(Math.abs(withPulse.anchorBpm() - 48)).toBeLessThanOrEqual(2);
  });

  it('stays at its peak when the power at the half is not locked to it (noise at f/2 beside a pulse at f)', () => {
    const a = new LiveAnchor();
    let s = 11;
    const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 * Math.PI;
    for (let k = 0; k < 20; k++) {
      const x = add(tone(1.6, rnd()), tone(0.8, rnd(), 0.9));
      a.add(hrWindow([x], 0, len, fs, hrNfft(len, fs)), x, fs);
    }
    expect(Math.abs(a.anchorBpm() - 96)).toBeLessThanOrEqual(1);
  });
});
