/**
 * `vitals`: the spec's command-line client. `runCli` parses, runs one command and returns the exit
 * code; every error becomes an exit code in one place (`exitCodeFor`, exit-codes.ts).
 */
import { Command, CommanderError, Option } from 'commander';
import { ApiError, VitalsError } from '@vitals/sdk';
import { CLI_VERSION } from './client.js';
import { CliError } from './errors.js';
import { EXIT_CODES, exitCodeFor } from './exit-codes.js';
import type { CliIo } from './io.js';
import { authTest } from './commands/auth-test.js';
import { logsTail } from './commands/logs-tail.js';
import { measure } from './commands/measure.js';

const ENV_HELP = `
Environment:
  VITALS_KEY_ID       API key id (required)
  VITALS_KEY_SECRET   API key secret (required)
  VITALS_BASE_URL     service address (default http://127.0.0.1:8787)

Exit codes:
  0 success, 1 unexpected error, 2 usage/config error or bad file, 3 unauthorized,
  4 other API refusal, 5 job failed/aborted/expired, 6 polling timed out, 7 rate limited`;

function program(io: CliIo, run: (p: Promise<number>) => void): Command {
  const root = new Command('vitals')
    .description('Command-line client of the vitals service: verify credentials, measure a video, tail the usage log.')
    .version(CLI_VERSION)
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .addHelpText(
      'after',
      `${ENV_HELP}\n\nExamples:\n  vitals auth test\n  vitals measure face.mp4 --consent\n  vitals logs tail --json`,
    );

  const auth = root.command('auth').description('credentials').exitOverride();
  auth
    .command('test')
    .description("verify the credentials and print the key's facts (status, features, limits, quotas, clock drift)")
    .option('--json', 'print the facts as JSON')
    .exitOverride()
    .addHelpText(
      'after',
      `\nExamples:\n  vitals auth test\n  VITALS_BASE_URL=https://vitals.example.com vitals auth test --json\n${ENV_HELP}`,
    )
    .action((opts: { json?: boolean }) => run(authTest(opts, io)));

  root
    .command('measure')
    .description('measure the vital signs in a video through the batch tier (.mp4, .mov, .webm)')
    .argument('<video>', 'path of the video file')
    .option('--consent', 'confirm that the person filmed consented to the measurement (required)')
    .option('--user-ref <ref>', 'opaque end-user reference ([A-Za-z0-9._:@-], 1-64, no personal data)')
    .option(
      '--features <list>',
      'comma-separated optional metrics: hrv,bp,spo2,emotion,gaze (default: all; emotion and gaze take the longest)',
    )
    .option('--json', 'print the settled job (with its measurement) as JSON on stdout')
    .option('--timeout <seconds>', 'give up polling after this long (exit 6)', '600')
    .addOption(new Option('--interval <seconds>', 'pause between polls').default('1').hideHelp())
    .option('--webhook-url <url>', 'https address the service calls when the job settles')
    .option('--client-ref <ref>', 'your own reference, stored with the job')
    .exitOverride()
    .addHelpText(
      'after',
      `
Re-running the same file with the same options returns the same job (the idempotency key is
derived from the file's SHA-256 and the options), so it is never charged twice.

Examples:
  vitals measure face.mp4 --consent
  vitals measure face.mov --consent --user-ref patient-0042 --features hrv,bp
  vitals measure face.webm --consent --json --timeout 300 > result.json
${ENV_HELP}`,
    )
    .action((video: string, opts: Record<string, unknown>) => run(measure(video, opts, io)));

  const logs = root.command('logs').description('usage log').exitOverride();
  logs
    .command('tail')
    .description("follow this key's usage log (polls at most once a second; backs off when rate limited)")
    .option('--since <time>', 'start at epoch ms, an ISO date, or a span back from now (30s, 15m, 2h, 1d)', '1h')
    .option('--json', 'newline-delimited JSON, one usage-log row per line')
    .option('--no-follow', 'print what is there and exit instead of following')
    .option('--interval <seconds>', 'pause between polls once caught up (at least 1)', '2')
    .option('--limit <n>', 'rows per request (1-200)', '200')
    .exitOverride()
    .addHelpText(
      'after',
      `
Examples:
  vitals logs tail
  vitals logs tail --since 15m --json | jq 'select(.status != "success")'
  vitals logs tail --since 2026-01-01T00:00:00Z --no-follow
${ENV_HELP}`,
    )
    .action((opts: Record<string, unknown>) => run(logsTail(opts, io)));

  return root;
}

/** Runs the CLI on `argv` (without the node and script paths) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let pending: Promise<number> | undefined;
  const root = program(io, (p) => (pending = p));
  try {
    await root.parseAsync(argv, { from: 'user' });
    if (!pending) {
      root.outputHelp();
      return EXIT_CODES.usage;
    }
    return await pending;
  } catch (err) {
    return report(err, io);
  }
}

function report(err: unknown, io: CliIo): number {
  if (err instanceof CommanderError) {
    // --help and --version are successes; everything else commander raises is a usage error.
    return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help'
      ? EXIT_CODES.success
      : EXIT_CODES.usage;
  }
  if (err instanceof ApiError) {
    const rid = err.requestId ? ` (request ${err.requestId})` : '';
    const retryable = err.code === 'rate_limited' || err.code === 'service_unavailable';
    const wait = retryable && err.retryAfterSec ? `; retry in ${err.retryAfterSec} s` : '';
    io.stderr.write(`error: ${err.code}: ${err.message}${rid}${wait}\n`);
    return exitCodeFor(err.code, { fromApi: true });
  }
  if (err instanceof CliError || err instanceof VitalsError) {
    io.stderr.write(`error: ${err.message}\n`);
    return exitCodeFor(err.code, { fromApi: !(err instanceof CliError) && err.code === 'object_too_large' });
  }
  io.stderr.write(`error: unexpected: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT_CODES.unexpected;
}
