/**
 * Plain words for the spec's codes (spec "Errors"): what the console shows next to, or instead of,
 * a machine code. Unknown codes fall back to the server's own message.
 */

/** HTTP error codes answered by the console API. */
const API_ERRORS: Record<string, string> = {
  unauthorized: 'You are not signed in, or the email or password is not right.',
  rate_limited: 'Too many attempts. Wait a minute, then try again.',
  validation_error: 'Some of the values are not valid.',
  not_found: 'This item does not exist, or it belongs to another organization.',
  conflict: 'This change is not possible in the current state.',
  forbidden: 'This request was refused (it did not come from the console itself).',
  payload_too_large: 'The request is too large.',
  internal_error: 'Something went wrong on the server. Try again in a moment.',
  service_unavailable: 'The service is busy or its database is unreachable. Try again in a moment.',
  network_error: 'The server could not be reached. Check your connection.',
  purchases_disabled: 'Buying tokens is not enabled on this server. Ask your operator.',
};

/** The usage log's ten `errorCode` values (spec "Usage-log errorCode vocabulary"). */
export const USAGE_ERROR_WORDS: Record<string, string> = {
  missing_credentials: 'Signing headers missing',
  invalid_nonce: 'Nonce too short or too long',
  invalid_timestamp: 'Timestamp not a number',
  timestamp_out_of_window: 'Clock skew over 5 minutes',
  unknown_key: 'Unknown key',
  key_disabled: 'Key disabled',
  key_expired: 'Key expired',
  invalid_signature: 'Signature did not match',
  nonce_reused: 'Nonce used twice',
  rate_limited: 'Rate limited',
};

export const USAGE_STATUS_WORDS: Record<string, string> = {
  success: 'Success',
  unauthorized: 'Unauthorized',
  rate_limited: 'Rate limited',
};

export const FEATURE_WORDS: Record<string, string> = {
  hrv: 'HRV',
  bp: 'Blood pressure',
  spo2: 'SpO2',
  emotion: 'Emotion',
  gaze: 'Gaze',
};

export const EVENT_NAMES = [
  'cloud.job.completed',
  'cloud.job.failed',
  'cloud.job.aborted',
  'cloud.job.expired',
  'webhook.test',
] as const;

/** A sentence for an error: the plain words for its code, else the server's message. */
export function errorWords(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err) {
    const code = String((err as { code: unknown }).code);
    const message = (err as { message?: string }).message;
    const words = API_ERRORS[code];
    if (code === 'validation_error' && message) return `Some of the values are not valid: ${message}`;
    // These codes cover many cases: the server's own sentence says which one.
    if ((code === 'conflict' || code === 'forbidden') && message) return message;
    return words ?? message ?? code;
  }
  return err instanceof Error ? err.message : String(err);
}
