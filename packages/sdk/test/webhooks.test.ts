import { describe, expect, it } from 'vitest';
import { signRequest } from '@vitals/protocol';
import { WebhookVerificationError, signWebhook, verifyJobWebhook, verifyOrgWebhook } from '@vitals/sdk';

const job = { jobId: 'cj_0123456789abcdef01234567', status: 'completed', createdAt: 1 };
const now = 1_800_000_000_000;
const ts = Math.floor(now / 1000);

describe('per-job webhooks (API key)', () => {
  it('verifies a delivery signed like the service signs a request, and parses after', async () => {
    const body = JSON.stringify({ ok: true, data: job });
    // The service signs with the ordinary NCS1 request signer: same canonical string.
    const headers = await signRequest({
      keyId: 'key_a',
      secret: 'sk_a',
      method: 'POST',
      path: '/hooks/vitals',
      body,
      timestamp: ts,
    });
    const env = await verifyJobWebhook({
      rawBody: body,
      headers,
      path: 'https://example.com/hooks/vitals?x=1',
      keyId: 'key_a',
      secret: 'sk_a',
      now,
    });
    expect(env.data.jobId).toBe(job.jobId);
  });

  it.each([
    ['a changed body', { body: '{"ok":true,"data":{}}' }, 'invalid_signature'],
    ['another key id', { keyId: 'key_b' }, 'unknown_key'],
    ['a wrong secret', { secret: 'sk_b' }, 'invalid_signature'],
    ['another path', { path: '/other' }, 'invalid_signature'],
    ['a stale timestamp', { now: now + 301_000 }, 'timestamp_out_of_window'],
    ['a future timestamp', { now: now - 301_000 }, 'timestamp_out_of_window'],
  ])('refuses %s', async (_name, change, code) => {
    const body = JSON.stringify({ ok: true, data: job });
    const signed = await signWebhook({
      kind: 'job',
      keyId: 'key_a',
      secret: 'sk_a',
      path: '/hooks',
      payload: body,
      timestamp: ts,
    });
    const c = change as { body?: string; keyId?: string; secret?: string; path?: string; now?: number };
    const err = await verifyJobWebhook({
      rawBody: c.body ?? signed.body,
      headers: c.keyId ? { ...signed.headers, 'x-key-id': c.keyId } : signed.headers,
      path: c.path ?? '/hooks',
      keyId: 'key_a',
      secret: c.secret ?? 'sk_a',
      now: c.now ?? now,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookVerificationError);
    expect((err as WebhookVerificationError).code).toBe(code);
  });

  it('never parses an unverified body (garbage with a bad signature is invalid_signature)', async () => {
    const signed = await signWebhook({ kind: 'job', keyId: 'k', secret: 's', path: '/h', payload: {}, timestamp: ts });
    await expect(
      verifyJobWebhook({ rawBody: 'not json', headers: signed.headers, path: '/h', keyId: 'k', secret: 's', now }),
    ).rejects.toMatchObject({ code: 'invalid_signature' });
  });

  it('missing headers are missing_credentials', async () => {
    await expect(
      verifyJobWebhook({ rawBody: '{}', headers: {}, path: '/h', keyId: 'k', secret: 's', now }),
    ).rejects.toMatchObject({
      code: 'missing_credentials',
    });
  });
});

describe('organization webhooks (whsec_)', () => {
  const delivery = { id: 'whd_0123456789abcdef01234567', event: 'cloud.job.completed', createdAt: now, data: job };

  it('round-trips with a Headers object and raw bytes, with a replay guard', async () => {
    const signed = await signWebhook({
      kind: 'org',
      webhookId: 'whe_1',
      secret: 'whsec_abc',
      path: '/wh',
      payload: delivery,
      timestamp: ts,
    });
    const seen = new Set<string>();
    const checkNonce = (n: string) => (seen.has(n) ? false : (seen.add(n), true));
    const input = {
      rawBody: new TextEncoder().encode(signed.body),
      headers: new Headers(signed.headers),
      path: '/wh',
      secret: 'whsec_abc',
      webhookId: 'whe_1',
      now,
      checkNonce,
    };
    const d = await verifyOrgWebhook(input);
    expect(d.event).toBe('cloud.job.completed');
    expect(d.data.jobId).toBe(job.jobId);
    await expect(verifyOrgWebhook(input)).rejects.toMatchObject({ code: 'nonce_reused' });
  });

  it('refuses another endpoint id and a rotated secret', async () => {
    const signed = await signWebhook({
      kind: 'org',
      webhookId: 'whe_1',
      secret: 'whsec_old',
      path: '/wh',
      payload: delivery,
      timestamp: ts,
    });
    const base = { rawBody: signed.body, headers: signed.headers, path: '/wh', now };
    await expect(verifyOrgWebhook({ ...base, secret: 'whsec_old', webhookId: 'whe_2' })).rejects.toMatchObject({
      code: 'unknown_webhook',
    });
    await expect(verifyOrgWebhook({ ...base, secret: 'whsec_new' })).rejects.toMatchObject({
      code: 'invalid_signature',
    });
  });
});
