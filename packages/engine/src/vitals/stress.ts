// Baevsky's stress index: SI = AMo / (2 · Mo · MxDMn), with the RR histogram in 50 ms bins,
// Mo the modal interval (s), AMo the share of intervals in the modal bin (%), MxDMn the range of
// intervals (s). Baevsky & Chernikova, "Heart rate variability analysis: physiological foundations
// and main methods", Cardiometry 10, 2017 (vitallens-core `src/signal/hrv.rs` uses the same form).
// Level mapping, after Baevsky's ranges (SI 50–150 normal at rest, above 150 tension, above 500
// strain, above 900 overstrain): < 150 low, 150–500 moderate, 500–900 high, ≥ 900 very_high.

export type StressLevel = 'low' | 'moderate' | 'high' | 'very_high';

export const STRESS_BIN_MS = 50;
export const STRESS_MIN_INTERVALS = 20;

export function baevskyStressIndex(nnMs: ArrayLike<number>): number | null {
  const n = nnMs.length;
  if (n < STRESS_MIN_INTERVALS) return null;
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    lo = Math.min(lo, nnMs[i]);
    hi = Math.max(hi, nnMs[i]);
  }
  const bins = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const b = Math.floor(nnMs[i] / STRESS_BIN_MS);
    bins.set(b, (bins.get(b) ?? 0) + 1);
  }
  let modeBin = 0;
  let modeCount = -1;
  for (const [b, c] of bins) {
    if (c > modeCount || (c === modeCount && b < modeBin)) {
      modeBin = b;
      modeCount = c;
    }
  }
  const moSec = ((modeBin + 0.5) * STRESS_BIN_MS) / 1000;
  const amoPct = (100 * modeCount) / n;
  const rangeSec = Math.max((hi - lo) / 1000, STRESS_BIN_MS / 1000);
  return amoPct / (2 * moSec * rangeSec);
}

export function stressLevel(index: number): StressLevel {
  if (index < 150) return 'low';
  if (index < 500) return 'moderate';
  if (index < 900) return 'high';
  return 'very_high';
}
