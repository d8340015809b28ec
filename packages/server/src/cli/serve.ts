/**
 * `vitals-server serve`: the API, the WebSocket endpoint and the workers in one process, on SQLite and
 * PostgreSQL alike (VITALS_EMBEDDED_WORKER=0: API only; batch/plugin.ts).
 */
import type { Config } from '../config.js';
import { createContext, closeContext } from '../deps.js';
import { buildServer } from '../server.js';
import { createKey, createOrg } from '../store/orgs-keys.js';
import type { AppContext } from '../context.js';

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
  const ctx = await createContext(config);
  await ensureDevelopmentKey(ctx, print);
  const { app } = await buildServer(ctx, { logger: { level: process.env.LOG_LEVEL ?? 'warn' } });
  await app.listen({ host: config.host, port: config.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  ctx.publicUrl = config.publicUrl ?? `http://${host}:${port}`;
  print(`listening on http://${host}:${port}`);
  if (config.demo !== 'off') print(`demo: http://${host}:${port}/ (VITALS_DEMO=0 turns it off; docs/operating.md)`);
  return async () => {
    await app.close();
    await closeContext(ctx);
  };
}
