/**
 * The tracker worker's detection budget (issue 15 §3: detection on a budget so a mid-range laptop
 * keeps 30 fps crops): 4 analyses a second while detection stays under 35 % of the wall clock, 2
 * otherwise, and back to 4 once the detector is fast again. The warm-up call (WASM kernels compiled
 * on first use, measured 300-700 ms in Chromium) must not decide the rate of a whole capture.
 */
import { describe, expect, it } from 'vitest';
import { DetectBudget, FAST_HZ, SLOW_HZ } from '../src/detect-budget.js';

function rates(calls: number[], budget = 0.35): number[] {
  const b = new DetectBudget(budget);
  return calls.map((ms) => b.record(ms));
}

const repeat = (ms: number, n: number): number[] => Array.from({ length: n }, () => ms);

describe('DetectBudget', () => {
  const cases: [string, number[], number][] = [
    ['a fast detector stays at 4 Hz', repeat(40, 40), FAST_HZ],
    ['a slow warm-up call, then a fast detector: still 4 Hz', [600, ...repeat(40, 40)], FAST_HZ],
    ['a detector over the budget (100 ms × 4 Hz = 40 %) steps down', [600, ...repeat(100, 40)], SLOW_HZ],
    ['slow, then fast again: back to 4 Hz', [600, ...repeat(120, 20), ...repeat(40, 20)], FAST_HZ],
    // 4 × 80 ms = 32 %: under the budget, but not under 80 % of it; a step back up would flap.
    ['slow, then just under the budget: stays at 2 Hz', [600, ...repeat(120, 20), ...repeat(80, 40)], SLOW_HZ],
    ['one slow call in a fast run does not step down', [600, ...repeat(40, 20), 200, ...repeat(40, 3)], FAST_HZ],
  ];
  it.each(cases)('%s', (_name, calls, last) => {
    expect(rates(calls).at(-1)).toBe(last);
  });

  it('the warm-up call is left out of the average', () => {
    const b = new DetectBudget(0.35);
    b.record(700);
    expect(b.averageMs).toBeNaN();
    b.record(50);
    expect(b.averageMs).toBe(50);
  });
});
