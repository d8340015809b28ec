/**
 * The capture's isomorphic core in Node: guidance codes (a table of conditions, debounced), the
 * on-device estimator (its result is the engine's offline measurement of the same packets, in the
 * POST /sdk/v1/measurements body shape; spec measurement rule 1 for a poor capture).
 */
import { estimateOffline, phantomStream, type EngineMeasurement } from '@vitals/engine';
import { MeasurementSubmission, QUALITY_REASON_HINTS, type Packet } from '@vitals/protocol';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import {
  conditions,
  Guidance,
  GUIDANCE_MESSAGES,
  OnDeviceEstimator,
  packetBytes,
  toOnDeviceResult,
} from '../src/core.js';

describe('guidance conditions', () => {
  const base = { tSec: 5, face: true, widthFraction: 0.3, brightness: 0.5, motion: 0.05, fps: 30 };
  const cases: [string, Partial<typeof base>, string[]][] = [
    ['a good frame', {}, []],
    ['no face', { face: false }, ['no_face']],
    ['a dark frame (covered camera) says dark, not "no face"', { face: false, brightness: 0.02 }, ['too_dark']],
    ['a dark face', { brightness: 0.1 }, ['too_dark']],
    ['an over-exposed face', { brightness: 0.9 }, ['too_bright']],
    ['a small, far face', { widthFraction: 0.1 }, ['face_too_small']],
    ['moving', { motion: 0.6 }, ['moving']],
    ['a slow camera', { fps: 12 }, ['low_frame_rate']],
    ['the frame rate before it is known', { fps: NaN }, []],
    ['several at once', { widthFraction: 0.1, motion: 0.6, fps: 10 }, ['face_too_small', 'moving', 'low_frame_rate']],
  ];
  it.each(cases)('%s', (_name, over, codes) => {
    expect([...conditions({ ...base, ...over })].sort()).toEqual([...codes].sort());
  });

  it('raises a hint after it holds half a second and clears it after as long without it', () => {
    const g = new Guidance(0.5);
    const at = (tSec: number, face: boolean) => g.update({ tSec, face, brightness: 0.5, widthFraction: 0.3, fps: 30 });
    expect(at(0, false)).toBeNull();
    expect(at(0.3, true)).toBeNull(); // a flicker does not raise it
    expect(at(1, false)).toBeNull();
    expect(at(1.6, false)).toEqual({ active: ['no_face'], raised: ['no_face'], cleared: [] });
    expect(at(2, true)).toBeNull();
    expect(at(2.6, true)).toEqual({ active: [], raised: [], cleared: ['no_face'] });
  });

  it('has plain words for every code', () => {
    for (const m of Object.values(GUIDANCE_MESSAGES)) expect(m).toMatch(/^[A-Z][^_]+\.$/);
  });
});

describe('the on-device estimator', () => {
  const phantom = (): Packet[] => [...phantomStream({ durationSec: 30, fps: 30, heartRateBpm: 72 }).packets];

  it('gives live hr events and ends with the offline measurement of the same packets, as a submission body', () => {
    const packets = phantom();
    const est = new OnDeviceEstimator();
    const events = [];
    let waves = 0;
    for (const p of packets) {
      const r = est.push(packetBytes(p)); // wire bytes, as the worker receives them
      events.push(...r.events);
      if (r.wave) {
        waves++;
        expect(Math.abs(r.wave.v)).toBeLessThanOrEqual(1);
      }
    }
    expect(events.some((e) => e.t === 'hr')).toBe(true);
    expect(waves).toBe(packets.filter((p) => p.type === 1).length);
    const { measurement, result } = est.finish({ sdkVersion: '0.1.0', modelsVersion: 'human-3.3.6+abc' });
    expect(measurement).toEqual(estimateOffline(packets));
    expect(result).toMatchObject({ source: 'web', sdkVersion: '0.1.0', modelsVersion: 'human-3.3.6+abc' });
    expect(result.cardiac?.heartRate?.value).toBeCloseTo(72, -1);
    expect(Value.Check(MeasurementSubmission, result)).toBe(true);
  });

  it('a camera that never found a face says so: face_lost, in the measurement and the submission body', () => {
    // The capture passes the share of the camera's frames with a face (capture.ts): packets exist
    // only where the tracker followed one, so without it an empty capture reads as "too short".
    const est = new OnDeviceEstimator();
    const { measurement, result } = est.finish({ sdkVersion: '0.1.0', modelsVersion: 'v1' }, 0);
    expect(measurement.quality.reasons).toEqual([
      { code: 'face_lost', hint: QUALITY_REASON_HINTS.face_lost, value: 1 },
    ]);
    expect(result.quality.reasons).toEqual(measurement.quality.reasons);
    expect(Value.Check(MeasurementSubmission, result)).toBe(true);
    // A face for the first 10 s of 40: the face, not the length, is what to fix.
    const part = new OnDeviceEstimator();
    for (const p of phantomStream({ durationSec: 40, fps: 30, heartRateBpm: 72 }).packets)
      if (p.tMicros < 10e6) part.push(packetBytes(p));
    const codes = part.finish({ sdkVersion: '0.1.0', modelsVersion: 'v1' }, 0.25).measurement.quality.reasons;
    expect(codes.map((r) => r.code)).toEqual(['face_lost']);
  });

  it('a poor capture carries no metric (spec: Measurement rule 1)', () => {
    const m = estimateOffline(phantom());
    const poor: EngineMeasurement = { ...m, quality: { ...m.quality, level: 'poor', score: 0.1, usable: false } };
    const r = toOnDeviceResult(poor, { sdkVersion: '0.1.0', modelsVersion: 'v1' });
    expect(r).toMatchObject({
      isComplete: false,
      quality: { level: 'poor', usable: false },
      cardiac: { heartRate: null },
      hrv: null,
      respiratory: { breathingRate: null },
      stress: null,
      bloodPressure: null,
      spo2: null,
    });
    expect(Value.Check(MeasurementSubmission, r)).toBe(true);
  });
});
