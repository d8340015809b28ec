/**
 * One error class, one table, one mapper (STYLE habit 1). Handlers throw `new ApiError(code)`;
 * `toEnvelope` in app.ts turns every error into the spec's failure envelope.
 */
import { ERROR_STATUS, type ErrorCode } from '@vitals/protocol';

export class ApiError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(
    readonly code: ErrorCode,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_STATUS[code];
    this.headers = headers;
  }
}

export const notFound = (what = 'resource'): ApiError => new ApiError('not_found', `${what} not found`);
