// The streaming benchmark's multi-process server (issue 18, target 4): `serve --processes N` as the
// operator runs it (packages/server/src/cli/serve-cluster.ts), with the benchmark's own entry for
// each process so the primary can collect every process's lags, processed frames, CPU and memory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:cluster';

export interface ProcessUsage {
  /** CPU before the forced GC (a measured window ends there); cpuMs after it (a window starts there). */
  cpuBeforeGcMs: number;
  cpuMs: number;
  userMs: number;
  sysMs: number;
  heapMb: number;
  extMb: number;
}

/** This process's CPU and memory after a full GC (the child runs with --expose-gc). */
export function processUsage(): ProcessUsage {
  const before = process.cpuUsage();
  (globalThis as any).gc?.();
  const c = process.cpuUsage();
  const m = process.memoryUsage();
  return {
    cpuBeforeGcMs: (before.user + before.system) / 1000,
    cpuMs: (c.user + c.system) / 1000,
    userMs: c.user / 1000,
    sysMs: c.system / 1000,
    heapMb: m.heapUsed / 2 ** 20,
    extMb: m.external / 2 ** 20 /* includes arrayBuffers (Node docs): not added twice */,
  };
}

/** One process of the cluster: the real server process, plus answers to the primary's metric requests. */
export async function clusterWorkerRole(): Promise<void> {
  const { runClusterWorker } = await import('../../../packages/server/src/cli/cluster-worker.js');
  const { takeHrLags, takeFramesProcessed } = await import('../../../packages/server/src/stream/metrics.js');
  process.on('message', (m: { benchMetrics?: number }) => {
    if (m?.benchMetrics === undefined) return;
    process.send!({
      benchReply: m.benchMetrics,
      lags: takeHrLags(),
      processed: takeFramesProcessed(),
      usage: processUsage(),
    });
  });
  await runClusterWorker();
}

interface WorkerMetrics {
  lags: number[];
  processed: number;
  usage: ProcessUsage;
}

let seq = 0;
function ask(w: Worker): Promise<WorkerMetrics> {
  const id = ++seq;
  return new Promise((resolve) => {
    const on = (m: { benchReply?: number } & WorkerMetrics) => {
      if (m?.benchReply !== id) return;
      w.off('message', on);
      resolve(m);
    };
    w.on('message', on);
    w.send({ benchMetrics: id });
  });
}

/**
 * The primary: `startCluster` over a fresh SQLite data dir, and an app that is not listening to
 * mint session tokens with (signed, through the route, as the one-process server role does).
 */
export async function startBenchCluster(processes: number, selfFile: string) {
  const { loadConfig } = await import('../../../packages/server/src/config.js');
  const { createContext, closeContext } = await import('../../../packages/server/src/deps.js');
  const { buildServer } = await import('../../../packages/server/src/server.js');
  const { makeKey } = await import('../../../packages/server/src/testing.js');
  const { startCluster } = await import('../../../packages/server/src/cli/serve-cluster.js');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-bench-'));
  const config = loadConfig(
    { VITALS_DATA_DIR: dataDir, VITALS_DEMO: '0', LOG_LEVEL: 'warn' },
    { host: '127.0.0.1', port: 0, processes: String(processes) },
  );
  const cluster = await startCluster(config, { exec: selfFile, env: { STREAM_BENCH_ROLE: 'cluster-worker' } });
  const ctx = await createContext(config, { migrate: false, env: { VITALS_EMBEDDED_WORKER: '0' } });
  ctx.publicUrl = cluster.url;
  const { app } = await buildServer(ctx);
  const key = await makeKey(ctx, { tokenBalanceUsd: 1e6 });
  return {
    port: cluster.port,
    app,
    key,
    /** Every process's metrics since the last call: lags and processed frames summed, CPU and memory summed (the primary's CPU included). */
    async metrics(): Promise<{ lags: number[]; processed: number; usage: ProcessUsage }> {
      const all = await Promise.all(cluster.workers().map(ask));
      const own = processUsage();
      const sum = (f: (u: ProcessUsage) => number) => all.reduce((a, m) => a + f(m.usage), 0);
      return {
        lags: all.flatMap((m) => m.lags),
        processed: all.reduce((a, m) => a + m.processed, 0),
        usage: {
          cpuBeforeGcMs: own.cpuBeforeGcMs + sum((u) => u.cpuBeforeGcMs),
          cpuMs: own.cpuMs + sum((u) => u.cpuMs),
          userMs: own.userMs + sum((u) => u.userMs),
          sysMs: own.sysMs + sum((u) => u.sysMs),
          heapMb: sum((u) => u.heapMb),
          extMb: sum((u) => u.extMb),
        },
      };
    },
    async stop(): Promise<void> {
      await app.close();
      await closeContext(ctx);
      await cluster.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
