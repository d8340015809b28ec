/**
 * `npm run soak` (issue 19): a few minutes of streaming captures, batch jobs and signed API calls at
 * a steady mix against a real server (PostgreSQL database of its own, 64 MB tmpfs data dir, loopback
 * only), while the soak SIGKILLs and restarts the server mid-session and mid-job, restarts
 * PostgreSQL and fills the data dir's disk. Then it checks what clients were told against what the
 * store holds, and exits non-zero on any loss. Bounded: SOAK_SECONDS of load (default 150), then at
 * most 4 minutes of draining. Results: docs/reliability.md.
 */
import { createDataDir, createDatabase, fillDisk, freePort, restartPostgres, ServerProcess } from './env.js';
import { Load } from './load.js';
import { check } from './checks.js';

const LOAD_SEC = Number(process.env.SOAK_SECONDS ?? 150);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (msg: string): void => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function main(): Promise<number> {
  const data = createDataDir();
  const db = await createDatabase();
  const server = new ServerProcess(await freePort(), data.dir, db.url);
  const worker = new ServerProcess(0, data.dir, db.url, 'worker');
  const faults: string[] = [];
  let load: Load | undefined;
  // Ctrl-C or a timeout still unmounts, drops the database and stops the children.
  const cleanup = async (): Promise<void> => {
    await Promise.all([server.stop(), worker.stop()]).catch(() => undefined);
    await db.drop().catch((e: unknown) => log(`could not drop the database: ${String(e)}`));
    data.cleanup();
  };
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => void cleanup().finally(() => process.exit(130)));
  try {
    await server.start();
    await worker.start();
    log(
      `server on ${server.baseUrl}, database ${db.url.split('/').pop()}, data dir ${data.tmpfs ? 'tmpfs 64 MB' : 'plain'}`,
    );
    if (!server.key) throw new Error('no development key printed on first start');
    load = new Load(server.baseUrl, server.key);
    load.start({ streams: 2 });
    const t0 = Date.now();
    const at = async (sec: number): Promise<void> => sleep(Math.max(0, t0 + sec * 1000 - Date.now()));

    /** SIGKILL while a capture streams and a job runs (waits up to 15 s for a running job). */
    const killMidWork = async (): Promise<void> => {
      for (let i = 0; i < 60; i++) {
        const running = await db.query(
          `select count(*)::int as n from cloud_jobs where status = 'running' and mode <> 'stream'`,
        );
        if (running[0].n > 0) break;
        await sleep(250);
      }
      const [{ jobs, streams }] = await db.query(
        `select count(*) filter (where mode <> 'stream')::int as jobs, count(*) filter (where mode = 'stream')::int as streams
           from cloud_jobs where status = 'running'`,
      );
      await Promise.all([server.kill(), worker.kill()]);
      faults.push(`SIGKILL of the server and the worker with ${streams} sessions and ${jobs} batch jobs running`);
      log(faults.at(-1)!);
      await sleep(1000);
      await Promise.all([server.start(), worker.start()]);
      log('server and worker restarted');
    };

    await at(LOAD_SEC * 0.2);
    await killMidWork();
    await at(LOAD_SEC * 0.4);
    // SOAK_SKIP_PG_RESTART=1 spares a shared PostgreSQL while the soak itself is being developed.
    if (process.env.SOAK_SKIP_PG_RESTART !== '1') {
      const ms = restartPostgres();
      faults.push(`PostgreSQL restarted (${ms} ms)`);
      log(faults.at(-1)!);
    } else faults.push('PostgreSQL restart: skipped (SOAK_SKIP_PG_RESTART=1)');
    await at(LOAD_SEC * 0.53);
    if (data.tmpfs) {
      const release = fillDisk(data.dir);
      log('data dir disk full');
      await sleep(10_000);
      release();
      faults.push('data dir disk full for 10 s (64 MB tmpfs filled to the last byte)');
      log(faults.at(-1)!);
    } else faults.push('disk full: skipped (tmpfs needs root)');
    await at(LOAD_SEC * 0.67);
    await killMidWork();
    const restartedAt = Date.now();
    await sleep(20_000);
    const rssBaseline = server.rssMb();
    log(`RSS baseline ${rssBaseline} MB (20 s after the last restart, under load)`);

    await at(LOAD_SEC);
    log('load stops; draining (captures end, fallbacks upload, jobs settle)');
    await Promise.race([load.drain(), sleep(240_000)]);
    log(`drained: ${JSON.stringify(load.progress())}`);
    await sleep(10_000);
    const rssEnd = server.rssMb();
    log(`RSS ${rssEnd} MB after draining and 10 s idle`);
    const result = await check(db, load.records, {
      rssBaseline,
      rssEnd,
      faults,
      uptimeSec: (Date.now() - restartedAt) / 1000,
    });
    console.log(JSON.stringify(result, null, 2));
    return result.losses === 0 ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
