/** Identifier formats (spec: Resources). All random parts come from WebCrypto. */
import { randomHex } from './encoding.js';

export const ID_PATTERNS = {
  measurement: /^meas_[0-9a-f]{24}$/,
  log: /^log_[0-9a-f]{24}$/,
  job: /^cj_[0-9a-f]{24}$/,
  upload: /^up_[0-9a-f]{32}$/,
  delivery: /^whd_[0-9a-f]{24}$/,
  webhookSecret: /^whsec_[0-9a-f]{48}$/,
} as const;

export const newMeasurementId = (): string => `meas_${randomHex(12)}`;
export const newLogId = (): string => `log_${randomHex(12)}`;
export const newJobId = (): string => `cj_${randomHex(12)}`;
export const newObjectKey = (): string => `up_${randomHex(16)}`;
export const newDeliveryId = (): string => `whd_${randomHex(12)}`;
export const newWebhookEndpointId = (): string => `whe_${randomHex(12)}`;
export const newWebhookSecret = (): string => `whsec_${randomHex(24)}`;
export const newOrgId = (): string => `org_${randomHex(12)}`;
export const newKeyId = (): string => `key_${randomHex(12)}`;
export const newKeySecret = (): string => `sk_${randomHex(32)}`;
export const newRequestId = (): string => `req_${randomHex(12)}`;

/** The zero log id used in a cursor that resumes from a time alone (CLARIFICATIONS 14). */
export const ZERO_LOG_ID = 'log_000000000000000000000000';
