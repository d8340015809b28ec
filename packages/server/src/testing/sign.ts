/**
 * Requests signed exactly as a client signs them (protocol `signRequest`: path without query, the
 * exact body bytes sent), injected into an app. Part of the test harness (../testing.ts).
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { randomHex, signRequest } from '@vitals/protocol';

export type Body = string | Uint8Array | Record<string, unknown> | unknown[] | undefined;

export interface SignedInjectOptions {
  method?: string;
  url: string;
  /** An object is sent as JSON; a string or bytes are sent as they are. */
  body?: Body;
  /** Replaces or (with `undefined`) removes headers after signing. */
  headers?: Record<string, string | undefined>;
  /** Unix seconds; defaults to the system clock. */
  timestamp?: number;
  nonce?: string;
  /** Signs another body than the one sent (to prove the body is covered). */
  signBody?: Body;
  /** Signs another path than the one requested. */
  signPath?: string;
  /** Signs with another secret. */
  signSecret?: string;
}

function bytesOf(body: Body): { payload: string | Buffer | undefined; contentType?: string } {
  if (body === undefined) return { payload: undefined };
  if (typeof body === 'string') return { payload: body, contentType: 'application/json' };
  if (body instanceof Uint8Array) return { payload: Buffer.from(body), contentType: 'application/octet-stream' };
  return { payload: JSON.stringify(body), contentType: 'application/json' };
}

/** Injects a request signed with NCS1 by `key`. */
export async function signedInject(
  app: FastifyInstance,
  key: { keyId: string; secret: string },
  opts: SignedInjectOptions,
): Promise<LightMyRequestResponse> {
  const method = (opts.method ?? 'GET').toUpperCase();
  const sent = bytesOf(opts.body);
  const signed = opts.signBody === undefined ? sent : bytesOf(opts.signBody);
  const sigHeaders = await signRequest({
    keyId: key.keyId,
    secret: opts.signSecret ?? key.secret,
    method,
    path: opts.signPath ?? opts.url,
    body:
      signed.payload === undefined
        ? undefined
        : typeof signed.payload === 'string'
          ? signed.payload
          : new Uint8Array(signed.payload),
    timestamp: opts.timestamp ?? Math.floor(Date.now() / 1000),
    nonce: opts.nonce ?? randomHex(16),
  });
  const headers: Record<string, string> = { ...sigHeaders };
  if (sent.contentType) headers['content-type'] = sent.contentType;
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === undefined) delete headers[k.toLowerCase()];
    else headers[k.toLowerCase()] = v;
  }
  return app.inject({ method: method as any, url: opts.url, headers, payload: sent.payload });
}
