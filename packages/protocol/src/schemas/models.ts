/**
 * Model grants and the model bundle (spec: POST /sdk/v1/models/grant, "request and response shape:
 * not shown"; designed in docs/decisions.md, "Model grants").
 */
import { Type, type Static } from '@sinclair/typebox';
import { VersionString } from './measurement.js';

/** Grant lifetime in seconds: the default, and the bounds a request may ask for. */
export const MODEL_GRANT_TTL_SEC = Object.freeze({ default: 300, min: 30, max: 900 });

/** An exact web origin, `scheme://host[:port]` (no path, query or trailing slash). */
export const WebOrigin = Type.String({ pattern: '^https?://[^/?#\\s@]+$', minLength: 8, maxLength: 200 });

export const ModelGrantRequest = Type.Object(
  {
    origin: Type.Optional(WebOrigin),
    ttlSec: Type.Optional(Type.Integer({ minimum: MODEL_GRANT_TTL_SEC.min, maximum: MODEL_GRANT_TTL_SEC.max })),
  },
  { additionalProperties: true },
);
export type ModelGrantRequest = Static<typeof ModelGrantRequest>;

export const ModelGrant = Type.Object({
  grant: Type.String({ description: 'Send as `Authorization: Bearer <grant>` to the manifest and file routes' }),
  expiresAt: Type.Integer({ description: 'Epoch milliseconds' }),
  modelsVersion: VersionString,
  origin: Type.Optional(WebOrigin),
  manifestUrl: Type.String(),
});
export type ModelGrant = Static<typeof ModelGrant>;

export const ModelFile = Type.Object({
  name: Type.String(),
  url: Type.String({ description: '/sdk/v1/models/files/<sha256>: content-addressed, immutable' }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  bytes: Type.Integer(),
  contentType: Type.String(),
});
export type ModelFile = Static<typeof ModelFile>;

export const ModelManifest = Type.Object({
  modelsVersion: VersionString,
  files: Type.Array(ModelFile),
});
export type ModelManifest = Static<typeof ModelManifest>;
