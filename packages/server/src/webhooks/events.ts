/**
 * What a webhook says (spec: Job webhooks). A per-job delivery POSTs `{ok: true, data: job}` signed
 * NCS1 with the job's API key; an organization delivery POSTs the envelope `{id, event, createdAt,
 * data: job}` with `x-webhook-id`, `x-timestamp`, `x-nonce`, `x-signature` keyed by the hex SHA-256
 * of the endpoint's `whsec_` secret. The canonical string is the NCS1 one over the receiver's path.
 * Bodies are built at each attempt from the job's current state: redelivery never replays a copy.
 */
import { canonicalString, randomHex, signWithSecretHash, type CloudJob } from '@vitals/protocol';

export const JOB_EVENTS = [
  'cloud.job.completed',
  'cloud.job.failed',
  'cloud.job.aborted',
  'cloud.job.expired',
] as const;
export const TEST_EVENT = 'webhook.test';

export const eventOfStatus = (status: string): string | undefined =>
  (JOB_EVENTS as readonly string[]).find((e) => e === `cloud.job.${status}`);

export interface SignedBody {
  body: Buffer;
  headers: Record<string, string>;
}

async function sign(
  path: string,
  body: Buffer,
  secretSha256: string,
  nowSec: number,
): Promise<{ timestamp: string; nonce: string; signature: string }> {
  const timestamp = String(nowSec);
  const nonce = randomHex(16);
  const canonical = await canonicalString({ method: 'POST', path, timestamp, nonce, body: new Uint8Array(body) });
  return { timestamp, nonce, signature: await signWithSecretHash(secretSha256, canonical) };
}

export async function jobDelivery(
  url: URL,
  job: CloudJob,
  keyId: string,
  keySecretSha256: string,
  nowSec: number,
): Promise<SignedBody> {
  const body = Buffer.from(JSON.stringify({ ok: true, data: job }));
  const s = await sign(url.pathname, body, keySecretSha256, nowSec);
  return {
    body,
    headers: { 'x-key-id': keyId, 'x-timestamp': s.timestamp, 'x-nonce': s.nonce, 'x-signature': s.signature },
  };
}

export async function endpointDelivery(
  url: URL,
  envelope: { id: string; event: string; createdAt: number; data: CloudJob | Record<string, unknown> },
  endpointId: string,
  secretSha256: string,
  nowSec: number,
): Promise<SignedBody> {
  const body = Buffer.from(JSON.stringify(envelope));
  const s = await sign(url.pathname, body, secretSha256, nowSec);
  return {
    body,
    headers: { 'x-webhook-id': endpointId, 'x-timestamp': s.timestamp, 'x-nonce': s.nonce, 'x-signature': s.signature },
  };
}
