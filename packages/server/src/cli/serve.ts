/**
 * `vitals-server serve`: the API, the WebSocket endpoint and the workers in one process, on SQLite and
 * PostgreSQL alike (VITALS_EMBEDDED_WORKER=0: API only; batch/plugin.ts). With `--processes N` the
 * process started here is the primary of N such processes on one port (serve-cluster.ts).
 */
import type { Config } from '../config.js';
import { createContext, closeContext } from '../deps.js';
import { buildServer } from '../server.js';
import { createKey, createOrg } from '../store/orgs-keys.js';
import type { AppContext } from '../context.js';
import { tuneHeap } from '../heap-tuning.js';

/** On the very first start (no key at all), a development organization and key, printed once. */
export async function ensureDevelopmentKey(ctx: AppContext, print: (line: string) => void): Promise<void> {
  const any = await ctx.db.db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst();
  if (any) return;
  await createDevelopmentKey(ctx, print);
}

/** The development organization and key of a first start; the secret is printed this once. */
export async function createDevelopmentKey(ctx: AppContext, print: (line: string) => void): Promise<void> {
  const now = ctx.clock.now();
  // Unmetered like every organization created without a balance (CLARIFICATIONS 28).
  const org = await createOrg(ctx.db.db, 'development', null, now);
  const { key, secret } = await createKey(ctx.db.db, { orgId: org.id, mode: 'test' }, now);
  print('First start: created a development organization and API key. The secret is shown this once:');
  print(`  VITALS_KEY_ID=${key.id}`);
  print(`  VITALS_KEY_SECRET=${secret}`);
}

export async function serve(config: Config, print: (line: string) => void): Promise<() => Promise<void>> {
  const { stop, url } = await startServer(config, { print });
  print(`listening on ${url}`);
  if (config.demo !== 'off') print(`demo: ${url}/ (VITALS_DEMO=0 turns it off; docs/operating.md)`);
  return stop;
}

/**
 * One server process: the store (migrated unless `migrate: false`), the first-start key (when
 * `print` is given), the API and the WebSocket endpoint listening on the configured address. A
 * cluster's processes (serve-cluster.ts) start with neither: their primary did both, once.
 */
export async function startServer(
  config: Config,
  opts: { print?: (line: string) => void; migrate?: boolean } = {},
): Promise<{ url: string; port: number; stop: () => Promise<void> }> {
  tuneHeap(config.heapGrowingPercent);
  const ctx = await createContext(config, { migrate: opts.migrate });
  if (opts.print) await ensureDevelopmentKey(ctx, opts.print);
  const { app } = await buildServer(ctx, { logger: { level: process.env.LOG_LEVEL ?? 'warn' } });
  await app.listen({ host: config.host, port: config.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const url = `http://${hostOf(config)}:${port}`;
  ctx.publicUrl = config.publicUrl ?? url;
  return {
    url,
    port,
    stop: async () => {
      await app.close();
      await closeContext(ctx);
    },
  };
}

/** The host as it appears in a URL (IPv6 in brackets). */
export function hostOf(config: Config): string {
  return config.host.includes(':') ? `[${config.host}]` : config.host;
}
