/**
 * The scale-out queue: pg-boss 10 on the same PostgreSQL (ARCHITECTURE: Defaults and scale). API
 * nodes announce; `vitals-server worker` processes consume. A job whose worker died stays `active`
 * in pg-boss until it expires and is retried, and the store's lease lets the retry (or another
 * worker's scan) take it over; either way `settleJob` settles it once.
 */
import PgBoss from 'pg-boss';
import type { JobHandler, JobQueue } from './job-queue.js';
import { QUERY_TIMEOUT_MARGIN_MS } from '../config.js';

const QUEUE = 'vitals-cloud-jobs';

export class PgBossQueue implements JobQueue {
  readonly name = 'pg-boss';
  private boss: PgBoss;
  private started: Promise<void> | undefined;

  /**
   * The store's limits, handed to pg-boss's own pool (it passes its options to pg.Pool) the way the
   * store's pool has them (store/pg-pool.ts): `connectTimeoutMs` (`VITALS_DB_CONNECT_TIMEOUT_MS`) so
   * announcing a job fails in bounded time when PostgreSQL is away (answered 503 like the store's
   * own waits: store/unavailable.ts) instead of waiting forever; `statementTimeoutMs`
   * (`VITALS_DB_STATEMENT_TIMEOUT_MS`) set on each new connection by a statement (PgBouncer refuses
   * unknown startup parameters), with pg's client-side `query_timeout` one second later for a
   * socket that went silent.
   */
  constructor(
    connectionString: string,
    opts: { schema?: string; expireInSeconds: number; connectTimeoutMs?: number; statementTimeoutMs?: number },
  ) {
    const limit = Math.max(0, Math.floor(opts.statementTimeoutMs ?? 0));
    const pool = {
      ...(opts.connectTimeoutMs ? { connectionTimeoutMillis: opts.connectTimeoutMs } : {}),
      ...(limit
        ? {
            query_timeout: limit + QUERY_TIMEOUT_MARGIN_MS,
            onConnect: (client: { query(sql: string): Promise<unknown> }) =>
              client.query(`set statement_timeout = ${limit}`),
          }
        : {}),
    };
    this.boss = new PgBoss({
      connectionString,
      schema: opts.schema ?? 'pgboss',
      max: 4,
      ...pool,
    } as PgBoss.ConstructorOptions);
    this.boss.on('error', () => undefined);
    this.expireInSeconds = opts.expireInSeconds;
  }
  private readonly expireInSeconds: number;

  private start(): Promise<void> {
    this.started ??= (async () => {
      await this.boss.start();
      await this.boss.createQueue(QUEUE).catch(() => undefined);
    })();
    return this.started;
  }

  async enqueue(jobId: string): Promise<void> {
    await this.start();
    // One live announcement per job (pg-boss refuses a second with the same singletonKey).
    await this.boss.send(
      QUEUE,
      { jobId },
      { singletonKey: jobId, retryLimit: 5, retryDelay: 1, expireInSeconds: this.expireInSeconds },
    );
  }

  async work(handler: JobHandler, opts: { concurrency: number }): Promise<void> {
    await this.start();
    for (let i = 0; i < Math.max(1, opts.concurrency); i++) {
      await this.boss.work<{ jobId: string }>(QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async (jobs) => {
        for (const j of jobs) await handler(j.data.jobId);
      });
    }
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    await this.started.catch(() => undefined);
    await this.boss.stop({ graceful: true, wait: true, timeout: 5000 }).catch(() => undefined);
  }
}
