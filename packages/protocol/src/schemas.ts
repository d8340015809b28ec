/**
 * JSON schemas (TypeBox) for request bodies and resources. The server validates with them, the
 * OpenAPI document is generated from them, and the TypeScript types are derived from them, so the
 * three cannot drift. `x-error-code` names the spec's error code for a field whose failure has its
 * own code (e.g. `platform` → `invalid_platform`); every other failure is `validation_error`.
 */
export * from './schemas/measurement.js';
export * from './schemas/jobs.js';
export * from './schemas/account.js';
export * from './schemas/models.js';
export * from './schemas/envelope.js';
export * from './schemas/console.js';
