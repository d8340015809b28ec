/**
 * One process of `serve --processes N` (serve-cluster.ts forks cluster-entry.ts, which runs this): the same
 * server as a one-process `serve`, on the address its primary chose, without migrating or printing
 * the first-start key (the primary did both). It stops gracefully when the primary asks, on SIGINT
 * or SIGTERM (a Ctrl-C reaches every process of the group), or when the primary is gone.
 */
import { loadConfig } from '../config.js';
import { startServer } from './serve.js';
import { CLUSTER_ENV, CLUSTER_MESSAGES } from './serve-cluster.js';

export async function runClusterWorker(): Promise<void> {
  const flags = JSON.parse(process.env[CLUSTER_ENV.flags] ?? '{}') as {
    dataDir?: string;
    host?: string;
    port?: number;
  };
  const config = loadConfig(process.env, { ...flags, processes: '1' });
  const server = await startServer(config, { migrate: false });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    ));
  process.on('message', (m: { t?: string }) => {
    if (m?.t === CLUSTER_MESSAGES.stop) void stop();
  });
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.once('disconnect', () => void stop());
  process.send?.({ t: CLUSTER_MESSAGES.listening, port: server.port });
}
