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
