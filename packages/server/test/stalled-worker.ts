/**
 * A `vitals-server worker` process whose object store never answers a read: a frames job it claims
 * stays `running` under its renewed lease until the process is killed (batch-kill.test.ts). The
 * stall is an injected port, so production processing carries no test pause. Same environment as
 * the real command (VITALS_DATA_DIR, VITALS_DATABASE_URL, the batch tuning variables).
 */
import { loadConfig } from '../src/config.js';
import { createContext } from '../src/deps.js';
import { batchOf } from '../src/batch/batch-runtime.js';

const ctx = await createContext(loadConfig(process.env));
const rt = batchOf(ctx);
rt.objects.readBytes = () => new Promise<never>(() => undefined);
const w = await rt.startWorker();
console.log(`worker ${w.owner} started (object reads stall)`);
// The worker's timers do not hold the process; this does, until the test kills it.
setInterval(() => undefined, 60_000);
