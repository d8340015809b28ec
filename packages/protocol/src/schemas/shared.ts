/** Schema helpers shared by the protocol's schema modules (not part of the public surface). */
import { Type, type TSchema } from '@sinclair/typebox';

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
export const Num = (o: object = {}) => Type.Number(o);
/**
 * A string enum that stays `{type: 'string', enum: [...]}` in JSON Schema (so a failure is one
 * `enum` error carrying the field's `x-error-code`, where a union of literals would report `anyOf`)
 * while its static type is the union of its values.
 */
export const StringEnum = <const T extends readonly string[]>(values: T, o: object = {}) =>
  Type.Unsafe<T[number]>(Type.String({ enum: [...values], ...o }));
/** Open objects: the documented fields, and room for more without a breaking change. */
export const OPEN = { additionalProperties: true };
export const Opt = <T extends TSchema>(t: T) => Type.Optional(t);
