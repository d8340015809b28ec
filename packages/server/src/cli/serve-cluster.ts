/**
 * `vitals-server serve --processes N` (VITALS_PROCESSES): N server processes on one port, through
 * Node's `cluster` (the primary accepts connections and hands each to the next process in turn; a
 * WebSocket stays with the process that got it). Nothing is shared between the processes but the
 * database, which already holds every rule that spans connections: one connection per session token
 * is the `pending → running` compare-and-set (stream/handshake.ts), nonces, keys and usage live
 * there, and a session settled by another process is found by the hub's periodic check.
 *
 * The primary serves nothing itself. Before forking it migrates the store, makes sure the server
 * secret exists (so no two processes race to create it) and prints the first-start key, once; it
 * then starts the processes (with port 0 they share the one port the primary binds), prints `listening on`
 * when every one listens, starts a new one in place of one that crashed, and on stop asks each to
 * shut down gracefully (their sessions end as on a one-process shutdown) and waits for them.
 * Only the first process runs the embedded batch worker (the others are API nodes, as with
 * VITALS_EMBEDDED_WORKER=0); on SQLite the worker finds the other processes' jobs by polling.
 */
import cluster, { type Worker } from 'node:cluster';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { closeContext, createContext } from '../deps.js';
import { ensureDevelopmentKey, hostOf } from './serve.js';

/** How long a process may take to end its sessions and close before it is killed. */
const STOP_GRACE_MS = 30_000;
/** A crashed process is replaced after this pause (a process that cannot start does not spin). */
const RESTART_DELAY_MS = 1000;

/** Messages between the primary and its processes (cluster-worker.ts). */
export const CLUSTER_MESSAGES = { listening: 'vitals:listening', stop: 'vitals:stop' } as const;

/** What a process is told through its environment (cluster-worker.ts reads it). */
export const CLUSTER_ENV = { flags: 'VITALS_CLUSTER_FLAGS', index: 'VITALS_CLUSTER_INDEX' } as const;

export interface ClusterHandle {
  url: string;
  port: number;
  /** The live processes, in index order. */
  workers(): Worker[];
  stop(): Promise<void>;
}

/** The compiled (dist/*.js) or source (src/*.ts, under tsx) worker entry beside this module. */
function defaultWorkerEntry(): string {
  const here = fileURLToPath(import.meta.url);
  return path.join(path.dirname(here), `cluster-entry${path.extname(here)}`);
}

export async function serveCluster(config: Config, print: (line: string) => void): Promise<() => Promise<void>> {
  const c = await startCluster(config, { print });
  print(`listening on ${c.url} (${config.processes} processes)`);
  if (config.demo !== 'off') print(`demo: ${c.url}/ (VITALS_DEMO=0 turns it off; docs/operating.md)`);
  return c.stop;
}

export async function startCluster(
  config: Config,
  opts: { print?: (line: string) => void; exec?: string; env?: Record<string, string> } = {},
): Promise<ClusterHandle> {
  // Migrations, the server secret and the first-start key: once, here, before any process starts.
  const ctx = await createContext(config);
  try {
    if (opts.print) await ensureDevelopmentKey(ctx, opts.print);
  } finally {
    await closeContext(ctx);
  }
  cluster.setupPrimary({ exec: opts.exec ?? defaultWorkerEntry(), args: [] });
  const workers: Array<Worker | undefined> = new Array(config.processes);
  // Every process asks for the configured port: the primary shares one listening handle per
  // requested address, so with port 0 all get the one port the first request bound.
  let port = config.port;
  let serving = false;
  let stopping = false;

  const start = (index: number): Promise<Worker> => {
    const w = cluster.fork({
      ...opts.env,
      [CLUSTER_ENV.index]: String(index),
      [CLUSTER_ENV.flags]: JSON.stringify({ dataDir: config.dataDir, host: config.host, port: config.port }),
      // One batch worker per machine is enough; the other processes are API nodes.
      ...(index > 0 ? { VITALS_EMBEDDED_WORKER: '0' } : {}),
    });
    workers[index] = w;
    const listening = new Promise<Worker>((resolve, reject) => {
      w.on('message', (m: { t?: string; port?: number }) => {
        if (m?.t !== CLUSTER_MESSAGES.listening) return;
        port = m.port ?? port;
        resolve(w);
      });
      w.once('exit', (code, signal) =>
        reject(new Error(`server process ${index} exited (${signal ?? code}) while starting`)),
      );
    });
    w.once('exit', (code, signal) => {
      if (workers[index] === w) workers[index] = undefined;
      // Exit code 0 is a graceful stop; anything else while serving is a crash: replace it.
      if (!serving || stopping || code === 0) return;
      console.error(`server process ${index} exited (${signal ?? code}); starting another`);
      setTimeout(() => {
        if (!stopping) start(index).catch((err: Error) => console.error(err.message));
      }, RESTART_DELAY_MS).unref();
    });
    return listening;
  };

  const stop = async (): Promise<void> => {
    stopping = true;
    await Promise.all(
      workers.map(async (w) => {
        if (!w || w.isDead()) return;
        const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
        if (w.isConnected()) w.send({ t: CLUSTER_MESSAGES.stop });
        else w.kill('SIGTERM');
        const timer = setTimeout(() => w.kill('SIGKILL'), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }),
    );
  };

  try {
    await Promise.all(Array.from({ length: config.processes }, (_, i) => start(i)));
    serving = true;
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `http://${hostOf(config)}:${port}`,
    port,
    workers: () => workers.filter((w): w is Worker => w !== undefined),
    stop,
  };
}
