/**
 * WAL checkpoints off the event loop. better-sqlite3 is synchronous, and SQLite's automatic
 * checkpoint runs inside whichever commit crosses 1000 WAL pages: it copies the pages into the
 * database file and fsyncs both files while the event loop waits (under load, a signed call spent
 * more wall time blocked in `run` than computing; docs/benchmarks.md, API). A worker thread with a
 * connection of its own runs a PASSIVE checkpoint every `intervalMs` instead; PASSIVE never waits
 * for the writer, and WAL lets a checkpoint run while the writer commits.
 *
 * Durability is unchanged: commits still land in the WAL exactly as before (synchronous=NORMAL),
 * only the copy into the main file moved. If the worker stops for any reason the main connection
 * goes back to automatic checkpoints, so the WAL cannot grow without bound.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

// Plain CommonJS run with `eval`, so it works the same from the TypeScript sources and from dist/.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.lib);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage({ error: String(err) }); }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export const AUTO_CHECKPOINT_PAGES = 1000;

export interface Checkpointer {
  /** Stops the worker (it closes its connection first). */
  stop(): Promise<void>;
}

export function startBackgroundCheckpoints(sqlite: SQLite.Database, file: string, intervalMs = 250): Checkpointer {
  sqlite.pragma('wal_autocheckpoint = 0');
  const lib = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER, { eval: true, workerData: { lib, file, intervalMs } });
  worker.unref();
  let stopping = false;
  const fallBack = (): void => {
    if (stopping || !sqlite.open) return;
    sqlite.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  };
  worker.on('error', fallBack);
  worker.on('exit', fallBack);
  worker.on('message', (m: { error?: string }) => {
    // A failed checkpoint (disk full, I/O error) is retried next tick; a busy one is normal.
    if (m.error && !/busy|locked/i.test(m.error)) process.emitWarning(`SQLite background checkpoint: ${m.error}`);
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      if (stopping) return exited;
      stopping = true;
      worker.postMessage('stop');
      const timeout = setTimeout(() => void worker.terminate(), 2000);
      await exited;
      clearTimeout(timeout);
    },
  };
}
