/**
 * Request validation. Bodies are validated without type coercion (so `consent: "true"` is not
 * `true`, CLARIFICATIONS 7); query strings are coerced from text. A field schema may name its own
 * error code with `x-error-code`; any other failure is `validation_error`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import fastJsonStringify from 'fast-json-stringify';
import { isErrorCode, type ErrorCode } from '@vitals/protocol';
import { ApiError } from './errors.js';

const base = { allErrors: false, strict: false, verbose: true, keywords: ['x-error-code'] };
const bodyAjv = new Ajv({ ...base, coerceTypes: false, useDefaults: true, removeAdditional: false });
const queryAjv = new Ajv({ ...base, coerceTypes: true, useDefaults: true, removeAdditional: false });

/** Finds the error code a failed schema keyword asks for. */
export function codeForAjvError(e: ErrorObject): ErrorCode {
  let named: unknown;
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty?: string }).missingProperty;
    named = missing ? (e.parentSchema as any)?.properties?.[missing]?.['x-error-code'] : undefined;
  } else {
    named = (e.parentSchema as any)?.['x-error-code'];
  }
  return typeof named === 'string' && isErrorCode(named) ? named : 'validation_error';
}

export function messageForAjvError(e: ErrorObject): string {
  if (e.keyword === 'required') return `${(e.params as any).missingProperty} is required`;
  const field = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || 'body';
  return `${field} ${e.message ?? 'is invalid'}`;
}

export function errorFromAjv(errors: ErrorObject[] | null | undefined): ApiError {
  const first = errors?.[0];
  if (!first) return new ApiError('validation_error', 'invalid request');
  return new ApiError(codeForAjvError(first), messageForAjvError(first));
}

/** Compiled once per schema object and ajv (body or query) for the process, like the serializers below. */
const validators = new WeakMap<object, Map<Ajv, ValidateFunction>>();

export const schemaCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : queryAjv;
  let byAjv = validators.get(schema as object);
  if (!byAjv) validators.set(schema as object, (byAjv = new Map()));
  let validate = byAjv.get(ajv);
  if (!validate) byAjv.set(ajv, (validate = ajv.compile(schema as object)));
  const compiled = validate;
  return (data: unknown) => {
    if (compiled(data)) return { value: data };
    return { error: errorFromAjv(compiled.errors) as unknown as Error };
  };
};

/**
 * Response serializers, compiled once per schema object for the whole process: what Fastify's
 * default compiler does (fast-json-stringify, no shared schemas, no options), without compiling
 * every route's answers again for each app instance. Compiling them was about half the time of
 * building an app, which the tests do once per test.
 */
const serializers = new WeakMap<object, (data: unknown) => string>();
export const serializerCompiler: FastifySerializerCompiler<any> = ({ schema }) => {
  let serialize = serializers.get(schema as object);
  if (!serialize) {
    serialize = fastJsonStringify(schema as object) as (data: unknown) => string;
    serializers.set(schema as object, serialize);
  }
  return serialize;
};
