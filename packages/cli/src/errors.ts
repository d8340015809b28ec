/** The CLI's own failures (usage, configuration, bad file, job outcome); mapped in exit-codes.ts. */
export class CliError extends Error {
  constructor(
    readonly code: 'usage_error' | 'config_error' | 'bad_file' | 'job_not_completed',
    message: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
