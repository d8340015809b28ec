/**
 * The PostgreSQL pool and the Kysely that runs on it (db.ts opens it). The pool carries the store's
 * limits (docs/decisions.md, "Store outages"), so a database that is slow, saturated or down fails
 * a request in bounded time instead of holding it:
 * - a connection, pooled or new, is waited for at most `connectTimeoutMs` (pg
 *   `connectionTimeoutMillis`: "timeout exceeded when trying to connect");
 * - every connection runs with `statement_timeout` = `statementTimeoutMs` (the server cancels the
 *   statement: SQLSTATE 57014), and pg gives up on a reply one second later (`query_timeout`),
 *   which ends a statement on a socket that went silent (a vanished host sends no reset).
 */
import pg from 'pg';
import {
  Kysely,
  PostgresDialect,
  type DatabaseIntrospector,
  type PostgresDialectConfig,
  type PostgresPool,
  type PostgresPoolClient,
} from 'kysely';
import type { Database } from './schema.js';
import { preparedStatementName } from './compiled.js';
import { QUERY_TIMEOUT_MARGIN_MS } from '../config.js';

export interface PgPoolOptions {
  url: string;
  /** Schema of its own (tests, several deployments in one database); letters, digits and _ only. */
  schema?: string;
  poolSize: number;
  connectTimeoutMs: number;
  /** 0: no statement_timeout and no query_timeout (migrations: an index build may take minutes). */
  statementTimeoutMs: number;
}

export function openPgKysely(o: PgPoolOptions): Kysely<Database> {
  const schema = o.schema?.replace(/[^a-z0-9_]/gi, '');
  const limit = Math.max(0, Math.floor(o.statementTimeoutMs));
  const pool = new pg.Pool({
    connectionString: o.url,
    max: o.poolSize,
    connectionTimeoutMillis: o.connectTimeoutMs,
    ...(limit ? { query_timeout: limit + QUERY_TIMEOUT_MARGIN_MS } : {}),
    // The search path is a connection startup option, so no query can run before it applies.
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
    // statement_timeout is set by a statement on each new connection, not as a startup parameter:
    // PgBouncer refuses startup parameters it does not know (FATAL, 08P01) unless an operator
    // lists them in ignore_startup_parameters. pg hands the connection out only after this ran;
    // if it fails, the connection is closed and the checkout fails with that error.
    ...(limit ? { onConnect: (client: pg.ClientBase) => client.query(`set statement_timeout = ${limit}`) } : {}),
  });
  // An idle pooled connection can be closed under us (database restart or failover, an
  // administrator's pg_terminate_backend, a network drop). pg reports that as an 'error' event on
  // the pool, which crashes the process when nobody listens; the pool has already discarded the
  // client and opens a new one on the next query, so a warning is all it takes.
  pool.on('error', (err) => process.emitWarning(`PostgreSQL connection lost; the pool reconnects (${err.message})`));
  const named = kyselyFacing(pool);
  const dialect = schema
    ? new SchemaScopedPostgresDialect({ pool: named }, schema)
    : new PostgresDialect({ pool: named });
  return new Kysely<Database>({ dialect });
}

/**
 * The pool as Kysely sees it, with the hot-path statements (compiled.ts) sent as named prepared
 * statements: pg parses each once per connection and then sends only Bind/Execute, and the server
 * keeps its plan. Parse, analysis and planning were about a quarter of PostgreSQL's CPU per signed
 * write (docs/benchmarks.md, API). Every other query goes as before (unnamed, planned per call), so
 * queries with varying text never pile up prepared statements on a connection.
 *
 * A connection that failed is closed when released, never pooled again, and further queries on it
 * (Kysely's rollback) fail at once: one whose statement pg gave up on (`query_timeout`; pg leaves the
 * statement pending, so the next user would wait behind it), one the server ended (a FATAL error:
 * shutdown, restart, pg_terminate_backend), one whose socket failed. A statement error (a constraint,
 * statement_timeout's 57014) leaves the connection as good as it was.
 *
 * pg-pool listens for a connection's 'error' only while it is idle; a socket that ends while the
 * connection is checked out emits 'error' with nobody listening, which would end the process. The
 * listener here is there for the whole life of the connection.
 */
function kyselyFacing(pool: pg.Pool): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const failed = new WeakSet<pg.PoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let w = wrapped.get(client);
    if (!w) {
      client.on('error', () => failed.add(client));
      const query = ((q: unknown, values?: unknown[]) => {
        if (typeof q !== 'string') return client.query(q as never, values as never);
        if (failed.has(client)) return Promise.reject(new Error('Connection terminated: failed, being closed'));
        const name = preparedStatementName(q);
        const running = name ? client.query({ name, text: q, values }) : client.query(q, values);
        return running.catch((err: unknown) => {
          if (connectionFailed(err)) failed.add(client);
          throw err;
        });
      }) as unknown as PostgresPoolClient['query'];
      w = { query, release: () => client.release(failed.has(client)) };
      wrapped.set(client, w);
    }
    return w;
  };
  return {
    connect: async () => wrap(await pool.connect()),
    end: () => pool.end(),
  };
}

/**
 * The connection cannot be trusted after this error: it came from pg itself (no reply in time, the
 * socket ended or failed) rather than from the server, or the server ended the session (FATAL).
 */
function connectionFailed(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err instanceof pg.DatabaseError) return err.severity === 'FATAL' || err.severity === 'PANIC';
  return true;
}

/**
 * Kysely's introspector lists the tables of every schema, and its Migrator decides whether its own
 * tables exist by name alone: in a schema of its own (tests, several deployments in one database)
 * it would see another schema's `kysely_migration_lock` and never create its own. This dialect
 * shows the introspector only the schema in use.
 */
class SchemaScopedPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly schema: string,
  ) {
    super(config);
  }

  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    const inner = super.createIntrospector(db);
    const schema = this.schema;
    return {
      getSchemas: () => inner.getSchemas(),
      getTables: async (o) => (await inner.getTables(o)).filter((t) => t.schema === schema),
      getMetadata: async (o) => ({ tables: (await inner.getMetadata(o)).tables.filter((t) => t.schema === schema) }),
    };
  }
}
