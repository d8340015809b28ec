/**
 * Why HRV or stress is absent (src/quality-reasons.ts `whyAbsent`), the rule the result view, the
 * console and the CLI share: withheld under the engine's `hrv_withheld` reason; HRV not requested
 * when the rate and stress (always computed) were published; otherwise nothing to say.
 */
import { describe, expect, it } from 'vitest';
import { ABSENT_WORDS, QUALITY_REASON_HINTS, whyAbsent } from '../src/index.js';

const hr = { heartRate: { value: 66, unit: 'bpm' } };
const withheld = { reasons: [{ code: 'hrv_withheld', hint: QUALITY_REASON_HINTS.hrv_withheld }] };

describe('whyAbsent', () => {
  it('withheld beats: both HRV and stress', () => {
    const m = { quality: withheld, cardiac: hr, hrv: null, stress: null };
    expect(whyAbsent(m, 'hrv')).toBe('withheld');
    expect(whyAbsent(m, 'stress')).toBe('withheld');
  });
  it('stress published without HRV: HRV was not requested', () => {
    const m = { quality: { reasons: [] }, cardiac: hr, hrv: null, stress: { index: 90, level: 'low' } };
    expect(whyAbsent(m, 'hrv')).toBe('not_requested');
  });
  it('a poor capture, or an older record without reasons: nothing to say', () => {
    expect(whyAbsent({ quality: { reasons: [{ code: 'no_pulse' }] }, cardiac: { heartRate: null } }, 'hrv')).toBeNull();
    expect(whyAbsent({ cardiac: hr }, 'stress')).toBeNull();
  });
  it('has words for each answer', () => {
    expect(Object.keys(ABSENT_WORDS).sort()).toEqual(['not_requested', 'withheld']);
  });
});
