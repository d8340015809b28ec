/** The response envelopes (spec: Requests, errors, envelope). */
import { Type, type TSchema } from '@sinclair/typebox';

export function envelopeOf<T extends TSchema>(data: T) {
  return Type.Object({ ok: Type.Literal(true), data });
}
export const ErrorEnvelope = Type.Object({
  ok: Type.Literal(false),
  error: Type.Object({ code: Type.String(), message: Type.String() }),
});
