/**
 * The result view's rows in Node (`metricRows` is pure): what an absent HRV or stress figure says.
 * The engine withholds both when the beats are not clean enough and says so with the `hrv_withheld`
 * reason; stress is always computed, so a published stress without HRV means HRV was not ordered.
 */
import { estimateOffline, generatePhantom } from '@vitals/engine';
import { QUALITY_REASON_HINTS } from '@vitals/protocol';
import { describe, expect, it } from 'vitest';
import { metricRows, type ShownMeasurement } from '../src/result-view.js';

const row = (m: ShownMeasurement, name: string) => metricRows(m).find(([k]) => k === name)?.[1];
const good = { level: 'good', score: 0.8, usable: true };
const hr = { heartRate: { value: 66, unit: 'bpm', confidence: 0.9 } };

describe('result view rows: absent HRV and stress', () => {
  it('withheld beats: both rows say so', () => {
    const m: ShownMeasurement = {
      quality: { ...good, reasons: [{ code: 'hrv_withheld', hint: QUALITY_REASON_HINTS.hrv_withheld }] },
      cardiac: hr,
      hrv: null,
      stress: null,
    };
    expect(row(m, 'Heart rate variability')).toBe('withheld: the beats were not clean enough');
    expect(row(m, 'Stress')).toBe('withheld: the beats were not clean enough');
  });

  it('stress published and no HRV: HRV was not ordered', () => {
    const m: ShownMeasurement = {
      quality: { ...good, reasons: [] },
      cardiac: hr,
      hrv: null,
      stress: { index: 90, level: 'low' },
    };
    expect(row(m, 'Heart rate variability')).toBe('not requested');
    expect(row(m, 'Stress')).toBe('low (index 90)');
    // Absent figures are flagged (a lighter style); values are not.
    const flags = Object.fromEntries(metricRows(m).map(([k, , absent]) => [k, absent === true]));
    expect(flags).toEqual({
      'Heart rate': false,
      'Heart rate variability': true,
      'Breathing rate': true,
      Stress: false,
      'Blood pressure (beta)': true,
      'SpO2 (beta)': true,
    });
  });

  it('a poor capture: nothing is available', () => {
    const m: ShownMeasurement = {
      quality: {
        level: 'poor',
        score: 0.1,
        usable: false,
        reasons: [{ code: 'no_pulse', hint: QUALITY_REASON_HINTS.no_pulse }],
      },
      cardiac: { heartRate: null },
      hrv: null,
      stress: null,
    };
    expect(row(m, 'Heart rate variability')).toBe('not available');
    expect(row(m, 'Stress')).toBe('not available');
  });

  it('the engine measurement of a 1 % pulse phantom: rate shown, HRV and stress withheld', () => {
    const m = estimateOffline(generatePhantom({ durationSec: 30, heartRateBpm: 72, seed: 17 }).packets);
    expect(row(m, 'Heart rate')).toMatch(/^\d+ bpm$/);
    expect(row(m, 'Heart rate variability')).toBe('withheld: the beats were not clean enough');
  });
});
