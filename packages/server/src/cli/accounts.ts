/**
 * `vitals-server accounts create --email E --org ORG --password-stdin --json` (CONTRACT.md): a
 * console account of an organization, its password read from standard input (never from an
 * argument, where `ps` and shell history would show it).
 */
import type { Config } from '../config.js';
import { createContext, closeContext } from '../deps.js';
import { AccountError, createAccount } from '../console/accounts.js';
import { UsageError } from './args.js';
import { extraCommands, type ExtraCommand } from './extra.js';

const USAGE = 'accounts create --email E --org ORG_ID|NEW_ORG_NAME --password-stdin --json';

/** The first line of standard input, without its line ending (at most 4 KiB read). */
export async function readPasswordLine(stream: NodeJS.ReadableStream = process.stdin): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.includes('\n') || text.length > 4096) break;
  }
  return text.split(/\r?\n/)[0];
}

export async function accountsCreate(
  config: Config,
  flags: Record<string, string | boolean | undefined>,
  password: string,
): Promise<{ accountId: string; orgId: string }> {
  if (typeof flags.email !== 'string' || typeof flags.org !== 'string')
    throw new UsageError(`accounts create needs --email E --org ORG\nusage: ${USAGE}`);
  const ctx = await createContext(config, { batch: { embeddedWorker: false } });
  try {
    return await createAccount(ctx.db.db, { email: flags.email, org: flags.org, password }, ctx.clock.now());
  } catch (err) {
    if (err instanceof AccountError) throw new UsageError(err.message);
    throw err;
  } finally {
    await closeContext(ctx);
  }
}

export const accountsCommand: ExtraCommand = {
  name: 'accounts',
  usage: USAGE,
  async run(config, sub, _rest, flags, out) {
    if (sub !== 'create') throw new UsageError(`usage: ${USAGE}`);
    if (flags.passwordStdin !== true)
      throw new UsageError('accounts create reads the password from standard input: pass --password-stdin');
    out(await accountsCreate(config, flags, await readPasswordLine()));
    return 0;
  },
};

extraCommands.push(accountsCommand);
