import { describe, expect, it } from 'vitest';
import { powerSpectrum } from '../src/dsp/spectrum.js';
import { captureHeartRate } from '../src/rate/capture-rate.js';
import { HR_BAND, hrWindow } from '../src/rate/hr-spectrum.js';
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

describe('LiveAnchor.anchorShare (the capture-level evidence the live events are gated on)', () => {
  // A 60 s capture at 10 Hz: a pulse at 72 bpm, a background reference with its own hum at 1.5 Hz
  // that also leaks into the pulse, and a crop-texture reference pumping at 0.93 Hz, which leaks too
  // (low-bitrate video: keyframe pumping in the crop's texture and in the skin alike).
  const n = 60 * fs;
  const at = (f: (t: number) => number) => Float64Array.from({ length: n }, (_, i) => f(i / fs));
  const noise = (seed: number) => {
    let s = seed;
    return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5) * 2;
  };
  const r1 = noise(7);
  const r2 = noise(11);
  const r3 = noise(13);
  const pulse = at(
    (t) =>
      Math.sin(2 * Math.PI * 1.2 * t) +
      0.5 * Math.sin(2 * Math.PI * 0.93 * t) +
      0.4 * Math.sin(2 * Math.PI * 1.5 * t) +
      0.6 * r1(),
  );
  const background = at((t) => Math.sin(2 * Math.PI * 1.5 * t + 1) + 0.3 * r2());
  const texture = at((t) => Math.sin(2 * Math.PI * 0.93 * t + 2) + 0.3 * r3());
  const nfft = hrNfft(len, fs);

  function liveShare(withTexture: boolean): number {
    const a = new LiveAnchor();
    for (let end = len; end <= n; end += fs) {
      const w = hrWindow([pulse], end - len, end, fs, nfft, HR_BAND, background);
      const tex = withTexture ? powerSpectrum(texture, fs, nfft, { from: end - len, to: end }).power : null;
      a.add(w, undefined, undefined, tex);
    }
    return a.anchorShare();
  }

  it("weighs by both references as the final does: within 0.02 of captureHeartRate's share", () => {
    const offline = captureHeartRate(pulse, fs, { references: [background, texture], periodCheck: false });
    expect(Math.abs(offline.anchorBpm - 72)).toBeLessThanOrEqual(1);
    expect(Math.abs(liveShare(true) - offline.anchorShare)).toBeLessThanOrEqual(0.02);
    // Without the texture the pumping counts as spread and the live evidence falls short of the final's.
    expect(offline.anchorShare - liveShare(false)).toBeGreaterThan(0.03);
  });
});
