/**
 * The one table from outcomes to exit codes (spec: Errors, "Command-line exit codes").
 * 0 success, 1 unexpected, 2 usage/config/bad file, 3 unauthorized, 4 other API refusal,
 * 5 job settled failed/aborted/expired, 6 polling timed out, 7 rate limited.
 */
import { EXIT_CODES } from '@vitals/protocol';

export { EXIT_CODES };
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/**
 * Error codes with an exit code of their own. Every other API refusal (`quota_exceeded`,
 * `feature_not_allowed`, `validation_error`, `object_too_large`, ...) is 4.
 */
const BY_CODE: Record<string, ExitCode> = {
  // Credentials the service will not accept. A disabled key is a 403 on the wire but, like an
  // expired key (401), it means "these credentials do not work": docs/cli.md.
  unauthorized: EXIT_CODES.unauthorized,
  key_disabled: EXIT_CODES.unauthorized,
  token_invalid: EXIT_CODES.unauthorized,
  token_expired: EXIT_CODES.unauthorized,
  rate_limited: EXIT_CODES.rateLimited,
  // Local problems found before or instead of a call.
  usage_error: EXIT_CODES.usage,
  config_error: EXIT_CODES.usage,
  bad_file: EXIT_CODES.usage,
  wait_timeout: EXIT_CODES.timeout,
  job_not_completed: EXIT_CODES.jobNotCompleted,
  network_error: EXIT_CODES.unexpected,
  internal_error: EXIT_CODES.unexpected,
  // The service's database was away through every retry: nothing was refused, like
  // internal_error or an unreachable service (docs/cli.md).
  service_unavailable: EXIT_CODES.unexpected,
};

/** Exit code for an error `code` (from `ApiError`, `VitalsError` or the CLI's own `CliError`). */
export function exitCodeFor(code: string | undefined, opts: { fromApi?: boolean } = {}): ExitCode {
  if (code !== undefined && code in BY_CODE) return BY_CODE[code];
  return opts.fromApi ? EXIT_CODES.refused : EXIT_CODES.unexpected;
}
