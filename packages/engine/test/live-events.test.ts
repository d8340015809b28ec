// Issue 17 item 4: the live `hr` events agree with the session's final. The final of a live session
// is the offline chain over the whole capture (`finish()`); each event carries the capture rate so
// far (rate/live-rate.ts), so their median sits within 2 bpm of the final and, on clean phantom
// captures, no event is more than 5 bpm from the phantom's rate.
import { describe, expect, it } from 'vitest';
import { generatePhantom, StreamingEstimator, type EngineEvent } from '@vitals/engine';

function median(x: number[]): number {
  const s = [...x].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function session(durationSec: number, heartRateBpm: number, seed: number) {
  const { packets, truth } = generatePhantom({ durationSec, heartRateBpm, seed });
  const s = new StreamingEstimator();
  const hr: Extract<EngineEvent, { t: 'hr' }>[] = [];
  for (const p of packets) for (const e of s.push(p)) if (e.t === 'hr') hr.push(e);
  const final = s.finish();
  return { hr, final, truthBpm: truth.heartRateBpm };
}

// Rates across the rest band; seeds 1 and 3 of each (harmonic-anchor.test.ts sweeps the finals at
// 45–70 bpm).
const cases = [55, 72, 110].flatMap((bpm) => [25, 60].flatMap((sec) => [1, 3].map((seed) => ({ bpm, sec, seed }))));

describe('live hr events against the final (phantom)', () => {
  it.each(cases)(
    '$sec s at $bpm bpm (seed $seed): median within 2 bpm of the final, every event within 5 of the truth',
    ({ bpm, sec, seed }) => {
      const { hr, final, truthBpm } = session(sec, bpm, seed);
      expect(final.cardiac.heartRate).not.toBeNull();
      // At 55 bpm the clean phantom's window SQI sits at 0.30–0.40, so the spec's gate (above 0.38)
      // may let no event through in 25 s; elsewhere every session sends events.
      if (!(bpm === 55 && sec === 25)) expect(hr.length).toBeGreaterThan(0);
      if (hr.length === 0) return;
      expect(Math.abs(median(hr.map((e) => e.hr)) - final.cardiac.heartRate!.value)).toBeLessThanOrEqual(2);
      for (const e of hr) {
        expect(Math.abs(e.hr - truthBpm)).toBeLessThanOrEqual(5);
        // The spec's shape and gate: hr, sqi above 0.38, tMs.
        expect(Object.keys(e).sort()).toEqual(['hr', 'sqi', 't', 'tMs']);
        expect(e.sqi).toBeGreaterThan(0.38);
      }
    },
  );

  it('the last event of a 60 s session is within 1 bpm of the final (the capture rate so far converges on it)', () => {
    const { hr, final } = session(60, 72, 1);
    expect(Math.abs(hr[hr.length - 1].hr - final.cardiac.heartRate!.value)).toBeLessThanOrEqual(1);
  });

  // At 45–50 bpm the live events sat on the double (~90–100 bpm) while the final said 45–50: the
  // running anchor now takes the period-doubling test and sends no event while it is in doubt
  // (rate/live-anchor.ts). The windows' SQI at the fundamental is mostly below the event threshold
  // there, so these sessions send few events or none rather than wrong ones. Seeds 13–14 were not
  // looked at while the rule was made.
  it.each([
    { bpm: 45, sec: 25, seed: 1 },
    { bpm: 45, sec: 60, seed: 2 },
    { bpm: 50, sec: 60, seed: 3 },
    { bpm: 45, sec: 60, seed: 13 },
    { bpm: 50, sec: 25, seed: 13 },
    { bpm: 50, sec: 60, seed: 14 },
  ])('at $bpm bpm ($sec s, seed $seed) no event is on the double', ({ bpm, sec, seed }) => {
    const { hr, truthBpm } = session(sec, bpm, seed);
    for (const e of hr) expect(Math.abs(e.hr - truthBpm)).toBeLessThanOrEqual(5);
  });

  it('the first event comes once five windows are decoded and the capture so far would publish, not from the first window', () => {
    // Five windows are there at 14 s; the clean 72 bpm phantom's evidence so far reaches the
    // publication threshold a few seconds later (18 s for this seed).
    const { hr } = session(25, 72, 1);
    expect(hr[0].tMs).toBeGreaterThanOrEqual(13_900);
    expect(hr[0].tMs).toBeLessThanOrEqual(20_100);
  });

  // A window's SQI above 0.38 is what the spec requires of an event, not evidence of a pulse: about
  // one pulse-less window in twenty passes it (quality.ts nullWindowTail, p95 0.39). Before the
  // publication gate joined the rule, these five faces without a pulse sent 10 events at rates from
  // 69 to 115 bpm on 3 of them, whose finals publish nothing.
  it('sends no hr, hrv, bp or spo2 event on a face without a pulse (60 s, seeds 1–5), whose final publishes nothing', () => {
    let events = 0;
    let slow = 0;
    for (let seed = 1; seed <= 5; seed++) {
      const { packets } = generatePhantom({ durationSec: 60, heartRateBpm: 60 + 5 * seed, pulseAmplitude: 0, seed });
      const s = new StreamingEstimator();
      for (const p of packets)
        for (const e of s.push(p)) {
          if (e.t === 'hr') events++;
          if (e.t === 'hrv' || e.t === 'bp' || e.t === 'spo2') slow++;
        }
      expect(s.finish().cardiac.heartRate).toBeNull();
    }
    expect(events).toBe(0);
    // The slow analyses' events follow the same decision (before it: 4 bp and spo2 events).
    expect(slow).toBe(0);
  }, 60_000);
});

describe('live analyses share their working arrays between sessions (estimators/streaming.ts livePool)', () => {
  it('two sessions at different frame rates, interleaved frame by frame, send the events each sends alone', () => {
    const a = generatePhantom({ durationSec: 20, heartRateBpm: 72, seed: 1, fps: 30 }).packets;
    const b = generatePhantom({ durationSec: 20, heartRateBpm: 90, seed: 2, fps: 25 }).packets;
    const alone = (ps: typeof a) => {
      const s = new StreamingEstimator();
      return ps.flatMap((p) => s.push(p));
    };
    const sa = new StreamingEstimator();
    const sb = new StreamingEstimator();
    const ea: EngineEvent[] = [];
    const eb: EngineEvent[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i < a.length) ea.push(...sa.push(a[i]));
      if (i < b.length) eb.push(...sb.push(b[i]));
    }
    expect(ea.length).toBeGreaterThan(0);
    expect(eb.length).toBeGreaterThan(0);
    expect(ea).toEqual(alone(a));
    expect(eb).toEqual(alone(b));
  });
});
