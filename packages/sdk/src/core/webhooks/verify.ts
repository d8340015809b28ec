/**
 * Webhook verification (spec: Events, "Job webhooks"). Both kinds sign the NCS1 canonical string
 * `NCS1\nPOST\n<receiver path>\n<x-timestamp>\n<x-nonce>\n<sha256 hex of the raw body>`:
 * per-job deliveries with the job's API key (`x-key-id`), organization deliveries with the
 * endpoint's `whsec_` secret (`x-webhook-id`). Verify over the raw bytes, compare in constant
 * time, and parse JSON only afterwards.
 */
import {
  SIGNATURE_WINDOW_SEC,
  canonicalString,
  hmacBase64,
  pathWithoutQuery,
  randomHex,
  signingKeyOf,
  timingSafeEqualString,
  utf8,
} from '@vitals/protocol';
import { VitalsError } from '../errors.js';
import type { CloudJob } from '../types.js';

export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export class WebhookVerificationError extends VitalsError {
  constructor(code: string, message: string) {
    super(code, message);
    this.name = 'WebhookVerificationError';
  }
}

interface CommonInput {
  /** The body exactly as received: bytes or the undecoded string. Never re-serialized JSON. */
  rawBody: Uint8Array | string;
  headers: HeaderBag;
  /** The receiver's path (or full URL) as configured at the service; the query is ignored. */
  path: string;
  /** Accepted skew, seconds. Default 300. */
  toleranceSec?: number;
  /** Epoch ms; defaults to `Date.now()`. */
  now?: number;
  /**
   * Optional replay guard: return `false` when this nonce was already seen within the window.
   * Store nonces for at least `2 * toleranceSec`.
   */
  checkNonce?: (nonce: string) => boolean | Promise<boolean>;
}

export interface JobWebhookInput extends CommonInput {
  keyId: string;
  secret: string;
}

export interface OrgWebhookInput extends CommonInput {
  /** The endpoint secret, `whsec_...`. */
  secret: string;
  /** When given, `x-webhook-id` must equal it. */
  webhookId?: string;
}

/** Delivery envelope of organization endpoints (spec: Resources). */
export interface WebhookDelivery {
  id: string;
  event:
    'cloud.job.completed' | 'cloud.job.failed' | 'cloud.job.aborted' | 'cloud.job.expired' | 'webhook.test' | string;
  createdAt: number;
  data: CloudJob;
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : bag[key];
  return Array.isArray(v) ? v[0] : v;
}

function receiverPath(path: string): string {
  if (/^https?:\/\//i.test(path)) return new URL(path).pathname;
  return pathWithoutQuery(path);
}

async function verifyCommon(input: CommonInput, secret: string): Promise<unknown> {
  const timestamp = header(input.headers, 'x-timestamp');
  const nonce = header(input.headers, 'x-nonce');
  const signature = header(input.headers, 'x-signature');
  if (!timestamp || !nonce || !signature) {
    throw new WebhookVerificationError('missing_credentials', 'x-timestamp, x-nonce and x-signature are required');
  }
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('invalid_timestamp', 'x-timestamp is not a number');
  const tolerance = input.toleranceSec ?? SIGNATURE_WINDOW_SEC;
  const nowSec = Math.floor((input.now ?? Date.now()) / 1000);
  if (Math.abs(nowSec - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_window', `x-timestamp is more than ${tolerance} s away`);
  }
  const body = typeof input.rawBody === 'string' ? utf8(input.rawBody) : input.rawBody;
  const canonical = await canonicalString({ method: 'POST', path: receiverPath(input.path), timestamp, nonce, body });
  const expected = await hmacBase64(await signingKeyOf(secret), canonical);
  if (!timingSafeEqualString(expected, signature)) {
    throw new WebhookVerificationError('invalid_signature', 'signature does not match');
  }
  if (input.checkNonce && !(await input.checkNonce(nonce))) {
    throw new WebhookVerificationError('nonce_reused', 'nonce already seen');
  }
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new WebhookVerificationError('invalid_body', 'verified body is not JSON');
  }
}

/**
 * Verifies a per-job webhook (signed with the job's API key) and returns the parsed
 * `{ok, data: job}` envelope. Throws `WebhookVerificationError` otherwise.
 */
export async function verifyJobWebhook(input: JobWebhookInput): Promise<{ ok: boolean; data: CloudJob }> {
  const keyId = header(input.headers, 'x-key-id');
  if (!keyId) throw new WebhookVerificationError('missing_credentials', 'x-key-id is required');
  if (!timingSafeEqualString(keyId, input.keyId))
    throw new WebhookVerificationError('unknown_key', 'x-key-id is not this key');
  return (await verifyCommon(input, input.secret)) as { ok: boolean; data: CloudJob };
}

/** Verifies an organization delivery (`whsec_` secret) and returns the parsed delivery envelope. */
export async function verifyOrgWebhook(input: OrgWebhookInput): Promise<WebhookDelivery> {
  const id = header(input.headers, 'x-webhook-id');
  if (!id) throw new WebhookVerificationError('missing_credentials', 'x-webhook-id is required');
  if (input.webhookId !== undefined && !timingSafeEqualString(id, input.webhookId)) {
    throw new WebhookVerificationError('unknown_webhook', 'x-webhook-id is not this endpoint');
  }
  return (await verifyCommon(input, input.secret)) as WebhookDelivery;
}

export interface SignedWebhook {
  /** The exact bytes to POST (verification is over these). */
  body: string;
  headers: Record<string, string>;
}

/**
 * Signs a payload the way the service does, for a receiver's own tests.
 * @example
 * const { body, headers } = await signWebhook({ kind: 'org', secret: 'whsec_...', webhookId: 'whe_1', path: '/hooks', payload })
 * await fetch('http://localhost:3000/hooks', { method: 'POST', body, headers })
 */
export async function signWebhook(
  input: { path: string; payload: unknown; timestamp?: number; nonce?: string } & (
    { kind: 'job'; keyId: string; secret: string } | { kind: 'org'; webhookId: string; secret: string }
  ),
): Promise<SignedWebhook> {
  const body = typeof input.payload === 'string' ? input.payload : JSON.stringify(input.payload);
  const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = input.nonce ?? randomHex(16);
  const canonical = await canonicalString({ method: 'POST', path: receiverPath(input.path), timestamp, nonce, body });
  const signature = await hmacBase64(await signingKeyOf(input.secret), canonical);
  const idHeader: Record<string, string> =
    input.kind === 'job' ? { 'x-key-id': input.keyId } : { 'x-webhook-id': input.webhookId };
  return {
    body,
    headers: {
      'content-type': 'application/json',
      ...idHeader,
      'x-timestamp': timestamp,
      'x-nonce': nonce,
      'x-signature': signature,
    },
  };
}
