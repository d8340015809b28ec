/**
 * JSON from outside (request bodies, WebSocket control messages) is parsed with Fastify's own
 * secure parser: a `__proto__` or `constructor.prototype` key is refused rather than turned into
 * a prototype change (prototype poisoning).
 */
import sjson from 'secure-json-parse';

/** Parses untrusted JSON text; throws on invalid JSON and on prototype-poisoning keys. */
export function parseUntrustedJson(text: string): unknown {
  return sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
}

/** Why a signed route's body was refused, or null when it was taken. */
export type JsonBodyRefusal = 'not_json_type' | 'invalid_json' | null;

/**
 * The one reading of a signed JSON route's body (app.ts `parseJsonBody`, and the signature layer
 * for a `deferNonce` route, which must know before settling the nonce whether the body will be
 * refused): the received bytes (a Buffer from the catch-all parser) are kept as `rawBody` and the
 * parsed value becomes `body`; an empty body is `undefined`. A body already taken (no longer a
 * Buffer) is left alone.
 */
export function takeJsonBody(req: {
  body?: unknown;
  rawBody?: Buffer;
  headers: Record<string, unknown>;
}): JsonBodyRefusal {
  const raw = req.body;
  if (!Buffer.isBuffer(raw)) return null;
  if (raw.length === 0) {
    req.rawBody = raw;
    req.body = undefined;
    return null;
  }
  if (!String(req.headers['content-type'] ?? '').includes('json')) return 'not_json_type';
  let body: unknown;
  try {
    body = parseUntrustedJson(raw.toString('utf8'));
  } catch {
    return 'invalid_json';
  }
  req.rawBody = raw;
  req.body = body;
  return null;
}
