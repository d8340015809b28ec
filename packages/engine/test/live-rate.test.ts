// The live rate's state (rate/live-rate.ts) is compact and bounded: it keeps what the decoding
// needs of each window (a quantised emission, a refinement offset and a back-pointer per candidate)
// in arrays allocated once, never the window's spectra, however long the session.
import { describe, expect, it } from 'vitest';
import { hrWindow } from '../src/rate/hr-spectrum.js';
import { LIVE_SPAN_WINDOWS, LiveRate } from '../src/rate/live-rate.js';
import { hrNfft } from '../src/rate/track-heart-rate.js';

const fs = 10;
const len = 10 * fs;
const nfft = hrNfft(len, fs);

/** A 10 s window of a 1.2 Hz pulse (72 bpm) with a little deterministic noise, starting at second t. */
function pulseWindow(t: number) {
  const x = Float64Array.from({ length: len }, (_, i) => {
    const s = t + i / fs;
    return Math.sin(2 * Math.PI * 1.2 * s) + 0.3 * Math.sin(2 * Math.PI * 0.93 * s * (1 + 0.01 * t) + t);
  });
  return hrWindow([x], 0, len, fs, nfft);
}

describe('LiveRate memory', () => {
  it('holds a fixed number of bytes from the first window on, under 64 KB, whatever the session length', () => {
    const live = new LiveRate();
    live.add(pulseWindow(0));
    live.estimate();
    const first = live.retainedBytes;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(64 * 1024);
    for (let t = 1; t < 3 * LIVE_SPAN_WINDOWS; t++) {
      live.add(pulseWindow(t));
      live.estimate();
    }
    expect(live.windows).toBe(3 * LIVE_SPAN_WINDOWS);
    // Past the ring's span nothing grows: the oldest window's slots are reused.
    expect(live.retainedBytes).toBe(first);
    // A window's full spectra (three 513-bin Float64 spectra, ~12 KB) are not what it keeps:
    // under 1 KB a window.
    expect(first / LIVE_SPAN_WINDOWS).toBeLessThan(1024);
  });

  it('keeps no reference to the windows it was given (the caller reuses their arrays)', () => {
    const a = new LiveRate();
    const b = new LiveRate();
    for (let t = 0; t < 12; t++) {
      const w = pulseWindow(t);
      a.add(w);
      b.add(pulseWindow(t));
      // The streaming estimator overwrites its window's spectra with the next one's.
      w.spectra[0].power.fill(0);
      w.score.fill(0);
    }
    const ea = a.estimate();
    expect(ea).toEqual(b.estimate());
    expect(Math.abs(ea.rateBpm - 72)).toBeLessThan(1);
  });
});
