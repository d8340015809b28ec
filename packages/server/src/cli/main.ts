/**
 * `vitals-server` (bin.ts runs it): the operator command line of CONTRACT.md. Commands: serve, worker, migrate,
 * orgs create|balance, keys create|disable|enable (webhooks come with the batch tier).
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { UsageError, toCamel } from './args.js';
import { orgsBalance, orgsCreate, keysCreate, keysSetStatus } from './admin.js';
import { serve } from './serve.js';
import { serveCluster } from './serve-cluster.js';
import { openStore } from '../deps.js';
import { migrateToLatest } from '../store/migrate.js';
import { extraCommands } from './extra.js';
import './worker.js';
import './accounts.js';

const HELP = `vitals-server <command>

Commands:
  serve [--host H] [--port P] [--data-dir D]     run the service (prints "listening on http://H:P")
        [--processes N|auto]                     N server processes on one port (default 1; VITALS_PROCESSES)
  worker [--data-dir D]                          run a job worker only (scale-out mode)
  migrate [--data-dir D]                         apply database migrations and exit
  orgs create --name N [--token-balance USD] --json   (no --token-balance: unmetered)
  orgs balance ORG (--set USD | --unmetered) [--json]
  keys create [--org ORG] [--rate-limit-per-min N] [--quota-seconds-month N]
              [--token-quota-month USD] [--expires-at EPOCH_MS] [--features a,b] --json
  keys disable KEY_ID | keys enable KEY_ID
${extraCommands.map((c) => `  ${c.usage}`).join('\n')}

Environment: VITALS_DATA_DIR (default ./.vitals), VITALS_DATABASE_URL (postgres://... switches to PostgreSQL),
VITALS_PUBLIC_URL, VITALS_WEBHOOK_ALLOW_HOSTS, VITALS_*_TTL_SEC, VITALS_DB_* (PostgreSQL limits; see docs/operating.md),
VITALS_CONSOLE_DIR, VITALS_CONSOLE_PAYMENTS (none | manual; docs/console.md).`;

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  processes: { type: 'string' },
  name: { type: 'string' },
  'token-balance': { type: 'string' },
  set: { type: 'string' },
  unmetered: { type: 'boolean' },
  org: { type: 'string' },
  'rate-limit-per-min': { type: 'string' },
  'quota-seconds-month': { type: 'string' },
  'token-quota-month': { type: 'string' },
  'expires-at': { type: 'string' },
  features: { type: 'string' },
  mode: { type: 'string' },
  url: { type: 'string' },
  event: { type: 'string' },
  limit: { type: 'string' },
  email: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Where the operator command line writes and what it reads, injected so tests can run it in-process. */
export interface ServerCliIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  env: Record<string, string | undefined>;
  /** `serve` runs until this resolves (the executable: at SIGINT or SIGTERM). */
  untilStopped(): Promise<void>;
}

/** Runs `vitals-server <argv>` and returns the exit code: 2 for a usage or configuration error. */
export async function runServerCli(argv: string[], io: ServerCliIo): Promise<number> {
  try {
    return await main(argv, io);
  } catch (err) {
    if (
      err instanceof UsageError ||
      err instanceof ConfigError ||
      (err as { code?: string }).code?.startsWith?.('ERR_PARSE_ARGS')
    ) {
      io.stderr.write(`error: ${(err as Error).message}\n`);
      return 2;
    }
    io.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return 1;
  }
}

async function main(argv: string[], io: ServerCliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const flags: Record<string, string | boolean | undefined> = {};
  for (const [k, v] of Object.entries(values)) flags[toCamel(k)] = v;
  const [cmd, sub, ...rest] = positionals;
  if (!cmd || flags.help) {
    io.stdout.write(`${HELP}\n`);
    return cmd ? 0 : 2;
  }
  let port: number | undefined;
  if (typeof flags.port === 'string') {
    port = Number(flags.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be 0-65535');
  }
  const config = loadConfig(io.env, {
    dataDir: flags.dataDir as string | undefined,
    host: flags.host as string | undefined,
    port,
    processes: flags.processes as string | undefined,
  });
  const out = (o: object): void => {
    const text = flags.json
      ? JSON.stringify(o)
      : Object.entries(o)
          .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`)
          .join('\n');
    io.stdout.write(`${text}\n`);
  };

  switch (cmd) {
    case 'serve': {
      const print = (l: string): void => void io.stdout.write(`${l}\n`);
      // More than one process: this one becomes the primary of a cluster on the same port.
      const stop = config.processes > 1 ? await serveCluster(config, print) : await serve(config, print);
      await io.untilStopped();
      await stop();
      return 0;
    }
    case 'migrate': {
      const db = openStore(config);
      try {
        const applied = await db.unlimited(migrateToLatest);
        out({ applied });
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'orgs':
      if (sub === 'create') {
        out(await orgsCreate(config, { name: flags.name as string, tokenBalance: flags.tokenBalance as string }));
        return 0;
      }
      if (sub === 'balance') {
        out(await orgsBalance(config, rest[0], { set: flags.set as string, unmetered: flags.unmetered === true }));
        return 0;
      }
      throw new UsageError(
        'usage: orgs create --name N [--token-balance USD] --json | orgs balance ORG (--set USD | --unmetered)',
      );
    case 'keys':
      if (sub === 'create') {
        out(await keysCreate(config, flags as Record<string, string>));
        return 0;
      }
      if (sub === 'disable' || sub === 'enable') {
        out(await keysSetStatus(config, rest[0], sub === 'enable' ? 'active' : 'disabled'));
        return 0;
      }
      throw new UsageError('usage: keys create|disable|enable');
    default: {
      const extra = extraCommands.find((c) => c.name === cmd);
      if (extra) return extra.run(config, sub, rest, flags, out);
      throw new UsageError(`unknown command "${cmd}"\n\n${HELP}`);
    }
  }
}
