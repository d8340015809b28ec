// Time-domain HRV: SDNN, RMSSD and pNN50 as defined by the Task Force of the ESC and NASPE,
// "Heart rate variability: standards of measurement", Circulation 93(5), 1996: SDNN is the
// standard deviation of the NN intervals (n − 1 denominator); RMSSD the root mean square of
// differences between adjacent NN intervals, here only pairs of intervals that are adjacent in time
// (both accepted, no rejected interval between them); pNN50 the share of those same differences
// above 50 ms. (The Task Force divides NN50 by the number of NN intervals, i.e. by the number of
// differences plus one in an unbroken series; counting differences only between adjacent accepted
// intervals but dividing by all NN intervals would bias pNN50 low whenever intervals are rejected.
// NeuroKit2 `hrv_time`, which computed the peer fixtures' references, instead differences the
// NN list across rejected gaps.)
import type { RrSeries } from '../beats/rr-intervals.js';

export interface HrvResult {
  sdnnMs: number;
  rmssdMs: number;
  pnn50Pct: number;
  meanRrMs: number;
  /** Number of NN intervals and of successive-difference pairs used. */
  nnCount: number;
  pairCount: number;
  /** Accepted share of raw intervals, 0..1. */
  acceptedFraction: number;
}

export function timeDomainHrv(rr: RrSeries): HrvResult | null {
  const nn = rr.nnMs;
  if (nn.length < 3) return null;
  let m = 0;
  for (const v of nn) m += v;
  m /= nn.length;
  let v2 = 0;
  for (const v of nn) v2 += (v - m) * (v - m);
  const sdnn = Math.sqrt(v2 / (nn.length - 1));
  let sq = 0;
  let pairs = 0;
  let over50 = 0;
  for (let i = 1; i < rr.rawMs.length; i++) {
    if (!rr.accepted[i] || !rr.accepted[i - 1]) continue;
    const d = rr.rawMs[i] - rr.rawMs[i - 1];
    sq += d * d;
    pairs++;
    if (Math.abs(d) > 50) over50++;
  }
  if (pairs < 2) return null;
  return {
    sdnnMs: sdnn,
    rmssdMs: Math.sqrt(sq / pairs),
    pnn50Pct: (100 * over50) / pairs,
    meanRrMs: m,
    nnCount: nn.length,
    pairCount: pairs,
    acceptedFraction: rr.rawMs.length ? nn.length / rr.rawMs.length : 0,
  };
}
