/**
 * Building the stored measurement. `origin` and `attested` are set here, never taken from the
 * client (spec: What the service does); fields the client did not set stay absent (CLARIFICATIONS 4).
 */
import {
  isQualityReasonCode,
  QUALITY_REASON_HINTS,
  type Measurement,
  type MeasurementRaw,
  type MeasurementSubmission,
  type QualityReason,
} from '@vitals/protocol';
import { ApiError } from '../errors.js';

export type { Measurement, MeasurementRaw };

const METRIC_FIELDS = ['cardiac', 'hrv', 'respiratory', 'stress', 'bloodPressure', 'spo2'] as const;

/** True when any metric of a measurement-shaped object carries a value. */
export function hasAnyMetric(
  m: Partial<Pick<Measurement, 'cardiac' | 'hrv' | 'respiratory' | 'stress' | 'bloodPressure' | 'spo2'>>,
): boolean {
  return Boolean(
    m.cardiac?.heartRate || m.hrv || m.respiratory?.breathingRate || m.stress || m.bloodPressure || m.spo2,
  );
}

export function fromSubmission(
  body: MeasurementSubmission,
  ids: { id: string; keyId: string; requestId: string; createdAt: number },
): Measurement {
  // A poor measurement carries no metrics (spec rule 1, CLARIFICATIONS 17).
  if (body.quality?.level === 'poor' && hasAnyMetric(body)) {
    throw new ApiError('validation_error', 'a measurement with quality.level "poor" must have every metric null');
  }
  const m: Measurement = {
    id: ids.id,
    keyId: ids.keyId,
    requestId: ids.requestId,
    origin: 'on_device',
    attested: false,
    source: body.source,
    createdAt: ids.createdAt,
  };
  if (body.userRef !== undefined) m.userRef = body.userRef;
  if (body.durationSec !== undefined) m.durationSec = body.durationSec;
  if (body.isComplete !== undefined) m.isComplete = body.isComplete;
  if (body.sdkVersion !== undefined) m.sdkVersion = body.sdkVersion;
  if (body.modelsVersion !== undefined) m.modelsVersion = body.modelsVersion;
  if (body.quality !== undefined) m.quality = submittedQuality(body.quality);
  for (const f of METRIC_FIELDS) {
    if (body[f] !== undefined) (m as any)[f] = body[f];
  }
  return m;
}

/**
 * An on-device quality block. Its reasons are the client's own analysis, stored as advice, never
 * checked against a capture the server did not see (docs/decisions.md, "Quality reasons"): each code
 * at most once; a well-formed code this server does not know (a newer client's) is dropped, not
 * refused; and the hint is the service's canonical text for the code, whatever the client sent (no
 * client text is shown as the service's).
 */
function submittedQuality(q: NonNullable<MeasurementSubmission['quality']>): NonNullable<Measurement['quality']> {
  const { reasons: submitted, ...grade } = q;
  if (submitted === undefined) return grade;
  const seen = new Set<string>();
  const reasons: QualityReason[] = [];
  for (const r of submitted) {
    if (seen.has(r.code)) throw new ApiError('validation_error', `quality.reasons lists "${r.code}" twice`);
    seen.add(r.code);
    if (!isQualityReasonCode(r.code)) continue;
    const out: QualityReason = { code: r.code, hint: QUALITY_REASON_HINTS[r.code] };
    if (r.value !== undefined) out.value = r.value;
    reasons.push(out);
  }
  return { ...grade, reasons };
}

/** The response view: raw only with the advanced opt-in, assessment only when asked for. */
export function present(m: Measurement, raw: MeasurementRaw | null, opts: { advanced: boolean }): Measurement {
  const out: Measurement = { ...m };
  delete out.raw;
  if (opts.advanced && raw) out.raw = raw;
  return out;
}
