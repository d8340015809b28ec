/** The program `serve --processes N` forks (serve-cluster.ts): one server process (cluster-worker.ts). */
import { runClusterWorker } from './cluster-worker.js';

runClusterWorker().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
