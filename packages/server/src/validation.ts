/**
 * Request validation. Bodies are validated without type coercion (so `consent: "true"` is not
 * `true`, CLARIFICATIONS 7); query strings are coerced from text. A field schema may name its own
 * error code with `x-error-code`; any other failure is `validation_error`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
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

export const schemaCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : queryAjv;
  const validate: ValidateFunction = ajv.compile(schema as object);
  return (data: unknown) => {
    if (validate(data)) return { value: data };
    return { error: errorFromAjv(validate.errors) as unknown as Error };
  };
};
