/**
 * Token pricing (GET /api/v1/pricing; not shown in the spec, designed in docs/decisions.md). Cloud
 * measurement is charged per started second of capture for the core metric set, plus a per-second
 * surcharge per ordered add-on feature; prices in US dollars, balances kept in micro-dollars.
 */
export const PRICING = {
  currency: 'USD',
  unit: 'second',
  version: '2026-11-01',
  rates: {
    core: { perSecondUsd: 0.0005, includes: ['heartRate', 'breathingRate', 'stress', 'quality'] },
    features: {
      hrv: { perSecondUsd: 0.0002 },
      bp: { perSecondUsd: 0.0003 },
      spo2: { perSecondUsd: 0.0003 },
      emotion: { perSecondUsd: 0.0004 },
      gaze: { perSecondUsd: 0.0002 },
    },
    onDeviceSubmission: { perMeasurementUsd: 0 },
  },
  metricSets: {
    core: ['heartRate', 'breathingRate', 'stress', 'quality'],
    hrv: ['hrv.sdnnMs', 'hrv.rmssdMs', 'hrv.pnn50Pct'],
    bp: ['bloodPressure'],
    spo2: ['spo2'],
    emotion: ['emotion'],
    gaze: ['gaze'],
  },
  packs: [
    { id: 'starter', priceUsd: 10, tokensUsd: 10 },
    { id: 'growth', priceUsd: 100, tokensUsd: 110 },
    { id: 'scale', priceUsd: 1000, tokensUsd: 1200 },
  ],
  notes: [
    'Seconds are the seconds of capture processed, rounded up to the whole second.',
    'Emotion and gaze are charged only when the node accepted them (models available).',
    'A superseded session is not charged; its replacement job is.',
  ],
} as const;

/** Cost in micro-dollars of processing `seconds` with the accepted features. */
export function costMicro(seconds: number, features: readonly string[]): number {
  const s = Math.ceil(Math.max(0, seconds));
  let perSecond = PRICING.rates.core.perSecondUsd;
  for (const f of features) {
    const r = (PRICING.rates.features as Record<string, { perSecondUsd: number }>)[f];
    if (r) perSecond += r.perSecondUsd;
  }
  return Math.round(s * perSecond * 1_000_000);
}
