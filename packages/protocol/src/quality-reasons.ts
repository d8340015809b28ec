/**
 * Quality reasons (issue 17, docs/engine.md "Quality reasons"): why a capture is not better, each
 * with a hint a person can act on. The codes are stable API values (append only); the hints are
 * the canonical text, shared by the engine that computes the reasons and the server that stores
 * them (an on-device submission's own hint text is replaced by these: docs/decisions.md).
 */
export const QUALITY_REASON_CODES = [
  'face_lost',
  'motion',
  'low_light',
  'overexposed',
  'flicker',
  'low_frame_rate',
  'compression',
  'too_short',
  'no_pulse',
  'hrv_withheld',
] as const;

export type QualityReasonCode = (typeof QUALITY_REASON_CODES)[number];

/** At most one reason per code. */
export const QUALITY_REASONS_MAX = QUALITY_REASON_CODES.length;
/**
 * What a submission may carry: codes of this form, at most this many. Wider than the known list, so
 * a client whose list is newer than the server's is not refused (the server drops codes it does not
 * know).
 */
export const QUALITY_REASON_CODE_PATTERN = '^[a-z][a-z0-9_]*$';
export const QUALITY_REASONS_SUBMITTED_MAX = 32;
export const QUALITY_REASON_HINT_MAX_CHARS = 200;

/** One line each, addressed to the person in front of the camera. */
export const QUALITY_REASON_HINTS: Readonly<Record<QualityReasonCode, string>> = Object.freeze({
  face_lost: 'Keep your whole face in the frame for the entire recording.',
  motion: 'Hold your head still and rest the camera or phone on something steady.',
  low_light: 'Your face is too dark: add light in front of you (a lamp or a window facing you).',
  overexposed: 'Part of your face is washed out: move away from direct sunlight or a bright lamp.',
  flicker: 'The light flickers: turn off fluorescent or dimmed LED lights and use daylight or a steady lamp.',
  low_frame_rate: 'Too few frames per second arrived: close other apps, add light, or use another camera.',
  compression: 'The video is heavily compressed: record or upload the original file at a higher quality.',
  too_short: 'Record for longer: at least 30 seconds, ideally a minute.',
  no_pulse: 'No pulse was found: sit still in steady light with the bare skin of your face visible, then try again.',
  hrv_withheld:
    'Heart rate variability and stress need cleaner beats than the heart rate: hold still in bright, even light and measure for a full minute.',
});

export function isQualityReasonCode(code: unknown): code is QualityReasonCode {
  return typeof code === 'string' && (QUALITY_REASON_CODES as readonly string[]).includes(code);
}

/** Why a measurement has no HRV or no stress figure, when it says so (`whyAbsent`). */
export type AbsentWhy = 'withheld' | 'not_requested';

/** The words every view (result view, console, CLI) shows for an absent HRV or stress figure. */
export const ABSENT_WORDS: Readonly<Record<AbsentWhy, string>> = Object.freeze({
  withheld: 'withheld: the beats were not clean enough',
  not_requested: 'not requested',
});

/**
 * Why HRV or stress is absent from `m` (call it when that figure is null or missing): `withheld`
 * when the engine said the beats were not clean enough (the `hrv_withheld` reason: HRV and stress
 * share that rule); `not_requested` for HRV when the rate and stress were published, since stress is
 * always computed and so only the order left HRV out (the job's or session's features); else null
 * (nothing is known, e.g. a poor capture, whose every metric is null).
 */
export function whyAbsent(
  m: {
    quality?: { reasons?: ReadonlyArray<{ code: string }> } | null;
    cardiac?: { heartRate?: unknown } | null;
    stress?: unknown;
  },
  metric: 'hrv' | 'stress',
): AbsentWhy | null {
  if (m.quality?.reasons?.some((r) => r.code === 'hrv_withheld')) return 'withheld';
  if (metric === 'hrv' && m.cardiac?.heartRate && m.stress) return 'not_requested';
  return null;
}
