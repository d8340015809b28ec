/**
 * What counts as "the store is unavailable" (store/unavailable.ts) and how the app answers it
 * (app.ts toWireError): a table of driver errors, then real failures from real drivers: SQLite's
 * busy timeout, a closed port, a server that accepts and says nothing, one that stops answering
 * after the handshake. None of these needs a PostgreSQL (pg-limits.test.ts covers the real one).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { StoreBusyError, isStoreUnavailable, unavailableReason } from '../src/store/unavailable.js';
import { openDatabase, type DbHandle } from '../src/store/db.js';
import { toWireError } from '../src/app.js';
import { ApiError } from '../src/errors.js';
import { ObjectStoreError } from '../src/objects/index.js';
import { PgBossQueue } from '../src/queue/pg-boss.js';

const withCode = (message: string, code: string, extra: Record<string, unknown> = {}): Error =>
  Object.assign(new Error(message), { code, ...extra });
const dbError = (message: string, code: string): pg.DatabaseError =>
  Object.assign(new pg.DatabaseError(message, 0, 'error'), { code });
const refused = withCode('connect ECONNREFUSED 10.1.2.3:5432', 'ECONNREFUSED', { address: '10.1.2.3', port: 5432 });

describe('unavailableReason', () => {
  test.for<[string, unknown, string]>([
    ['a full batch queue', new StoreBusyError(), 'store_busy'],
    ['statement_timeout (57014)', dbError('canceling statement due to statement timeout', '57014'), '57014'],
    ['admin shutdown (57P01)', dbError('terminating connection due to administrator command', '57P01'), '57P01'],
    [
      'crash shutdown (57P02)',
      dbError('terminating connection because of crash of another server process', '57P02'),
      '57P02',
    ],
    ['cannot connect now (57P03)', dbError('the database system is starting up', '57P03'), '57P03'],
    ['too many connections (53300)', dbError('sorry, too many clients already', '53300'), '53300'],
    [
      'the object store unreachable (ObjectStoreError keeps the socket code)',
      new ObjectStoreError('object store: get failed', 'ECONNREFUSED'),
      'ECONNREFUSED',
    ],
    [
      'the object store throttling (S3 SlowDown, HTTP 503)',
      new ObjectStoreError('object store: put failed (SlowDown, HTTP 503)', 'SlowDown', 503),
      'SlowDown',
    ],
    [
      'a write on a standby after a failover (25006)',
      dbError('cannot execute INSERT in a read-only transaction', '25006'),
      '25006',
    ],
    ['connection failure (08006)', dbError('connection failure', '08006'), '08006'],
    ['cannot establish (08001)', dbError('could not connect', '08001'), '08001'],
    ['protocol violation (08P01)', dbError('unsupported startup parameter', '08P01'), '08P01'],
    ['ECONNREFUSED', refused, 'ECONNREFUSED'],
    ['ECONNRESET', withCode('read ECONNRESET', 'ECONNRESET'), 'ECONNRESET'],
    ['ETIMEDOUT', withCode('connect ETIMEDOUT 10.1.2.3:5432', 'ETIMEDOUT'), 'ETIMEDOUT'],
    [
      'every address refused (AggregateError)',
      new AggregateError([refused, refused], 'connect failed'),
      'ECONNREFUSED',
    ],
    ['a cause refused', new Error('query failed', { cause: refused }), 'ECONNREFUSED'],
    ['pool checkout timeout', new Error('timeout exceeded when trying to connect'), 'connect_timeout'],
    ['connection lost', new Error('Connection terminated unexpectedly'), 'connection_terminated'],
    ['connect timeout', new Error('Connection terminated due to connection timeout'), 'connection_terminated'],
    ['no reply (query_timeout)', new Error('Query read timeout'), 'query_read_timeout'],
    ['SQLITE_BUSY', new SQLite.SqliteError('database is locked', 'SQLITE_BUSY'), 'SQLITE_BUSY'],
    [
      'SQLITE_BUSY_SNAPSHOT',
      new SQLite.SqliteError('database is locked', 'SQLITE_BUSY_SNAPSHOT'),
      'SQLITE_BUSY_SNAPSHOT',
    ],
    ['SQLITE_LOCKED', new SQLite.SqliteError('database table is locked', 'SQLITE_LOCKED'), 'SQLITE_LOCKED'],
    ['SQLITE_FULL', new SQLite.SqliteError('database or disk is full', 'SQLITE_FULL'), 'SQLITE_FULL'],
    ['SQLITE_IOERR_WRITE', new SQLite.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE'), 'SQLITE_IOERR_WRITE'],
    ['disk full (53100)', dbError('could not extend file: No space left on device', '53100'), '53100'],
    ['out of memory (53200)', dbError('out of memory', '53200'), '53200'],
  ])('%s → unavailable', ([, err, reason]) => {
    expect(unavailableReason(err)).toBe(reason);
    expect(isStoreUnavailable(err)).toBe(true);
  });

  test.for<[string, unknown]>([
    ['unique violation (23505)', dbError('duplicate key value violates unique constraint "nonces_pkey"', '23505')],
    ['syntax error (42601)', dbError('syntax error at or near "selec"', '42601')],
    ['bad value (22P02)', dbError('invalid input syntax for type bigint', '22P02')],
    ['serialization failure (40001)', dbError('could not serialize access', '40001')],
    ['a coded error whose message looks like a lost connection', dbError('Connection terminated', '23505')],
    [
      'SQLITE_CONSTRAINT_PRIMARYKEY',
      new SQLite.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_PRIMARYKEY'),
    ],
    ['SQLITE_ERROR (a bad statement)', new SQLite.SqliteError('no such table: t', 'SQLITE_ERROR')],
    [
      'the object store refusing the credentials (S3 AccessDenied)',
      new ObjectStoreError('object store: get failed (AccessDenied, HTTP 403)', 'AccessDenied', 403),
    ],
    ['a plain Error', new Error('boom')],
    ['a TypeError', new TypeError('cannot read properties of undefined')],
    ['an ApiError', new ApiError('not_found', 'nope')],
    ['a string', 'ECONNREFUSED'],
    ['undefined', undefined],
    ['null', null],
  ])('%s → not unavailable', ([, err]) => {
    expect(unavailableReason(err)).toBeUndefined();
    expect(isStoreUnavailable(err)).toBe(false);
  });

  test('toWireError: 503 service_unavailable, Retry-After 1, a fixed message that names no host or SQL', () => {
    for (const err of [
      refused,
      dbError('canceling statement due to statement timeout', '57014'),
      new StoreBusyError(),
    ]) {
      const w = toWireError(err);
      expect(w).toEqual({
        status: 503,
        code: 'service_unavailable',
        message: 'the service is temporarily unavailable; retry shortly',
        headers: { 'Retry-After': '1' },
      });
    }
    expect(toWireError(new Error('boom'))).toMatchObject({ status: 500, code: 'internal_error', headers: {} });
    expect(toWireError(dbError('duplicate key', '23505'))).toMatchObject({ status: 500, code: 'internal_error' });
  });
});

describe('real failures are classified', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  test('SQLite: a write past busy_timeout while another connection holds the write lock → SQLITE_BUSY', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-busy-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'x.db');
    const a = new SQLite(file);
    a.pragma('journal_mode = WAL');
    a.exec('create table t (x integer)');
    const b = new SQLite(file);
    b.pragma('busy_timeout = 20');
    cleanups.push(() => {
      a.close();
      b.close();
    });
    a.exec('BEGIN IMMEDIATE');
    let caught: unknown;
    try {
      b.exec('insert into t values (1)');
    } catch (err) {
      caught = err;
    }
    expect(unavailableReason(caught)).toMatch(/^SQLITE_BUSY/);
  });

  test('PostgreSQL URL on a closed port → ECONNREFUSED', async () => {
    const h = openDatabase({ databaseUrl: 'postgres://vitals@127.0.0.1:1/vitals', connectTimeoutMs: 2000 });
    cleanups.push(() => h.close());
    const err = await sql`select 1`.execute(h.db).catch((e: unknown) => e);
    expect(unavailableReason(err)).toBe('ECONNREFUSED');
  });

  test('a server that accepts and never answers: the connect timeout ends the wait', async () => {
    const silent = net.createServer(() => undefined);
    const sockets = new Set<net.Socket>();
    silent.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    cleanups.push(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => silent.close(() => r()));
    });
    const h = openDatabase({
      databaseUrl: `postgres://vitals@127.0.0.1:${port(silent)}/vitals`,
      connectTimeoutMs: 300,
    });
    cleanups.push(() => h.close());
    const started = Date.now();
    const err = await sql`select 1`.execute(h.db).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(unavailableReason(err)).toBe('connection_terminated');
  });

  test('a server that stops answering after the handshake: query_timeout ends the statement, the connection is not reused, a waiting checkout times out', async () => {
    const stall = await stallingServer();
    cleanups.push(stall.close);
    // statement_timeout 200 ms (the server never applies it here), so pg gives up after 1.2 s.
    const h: DbHandle = openDatabase({
      databaseUrl: `postgres://vitals@127.0.0.1:${stall.port}/vitals`,
      poolSize: 1,
      connectTimeoutMs: 300,
      statementTimeoutMs: 200,
    });
    cleanups.push(() => h.close());
    const first = sql`select 1`.execute(h.db).catch((e: unknown) => e);
    // The only connection is busy: the next checkout waits 300 ms and gives up.
    const second = await sql`select 2`.execute(h.db).catch((e: unknown) => e);
    expect(unavailableReason(second)).toBe('connect_timeout');
    expect(unavailableReason(await first)).toBe('query_read_timeout');
    expect(stall.statements).toEqual(['set statement_timeout = 200', 'select 1']);
    // The connection whose statement is still pending was closed, not pooled again: a new one opens.
    const third = await sql`select 3`.execute(h.db).catch((e: unknown) => e);
    expect(unavailableReason(third)).toBe('query_read_timeout');
    expect(stall.connections).toBe(2);
    expect(stall.closedByClient).toBeGreaterThanOrEqual(1);
  }, 15_000);
});

function port(server: net.Server): number {
  return (server.address() as net.AddressInfo).port;
}

/**
 * Just enough of the PostgreSQL wire protocol to stand for a server that stalls: it accepts the
 * startup (no password), answers `set ...` statements, and never answers anything else, as a
 * database host that hangs mid-way does (no reset, no error: the socket just goes quiet).
 */
async function stallingServer() {
  const statements: string[] = [];
  const sockets = new Set<net.Socket>();
  const state = { connections: 0, closedByClient: 0 };
  const msg = (type: string, body: Buffer): Buffer => {
    const head = Buffer.alloc(5);
    head.write(type, 0, 'latin1');
    head.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  };
  const int32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(n);
    return b;
  };
  const ready = msg('Z', Buffer.from('I'));
  const server = net.createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('end', () => state.closedByClient++);
    socket.on('error', () => undefined);
    let buf = Buffer.alloc(0);
    let started = false;
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (!started) {
          if (buf.length < 4 || buf.length < buf.readInt32BE(0)) return;
          buf = buf.subarray(buf.readInt32BE(0));
          started = true;
          socket.write(Buffer.concat([msg('R', int32(0)), ready])); // AuthenticationOk, ReadyForQuery
          continue;
        }
        if (buf.length < 5 || buf.length < 1 + buf.readInt32BE(1)) return;
        const type = String.fromCharCode(buf[0]);
        const body = buf.subarray(5, 1 + buf.readInt32BE(1));
        buf = buf.subarray(1 + buf.readInt32BE(1));
        if (type !== 'Q') continue; // Terminate and anything else: no answer
        const text = body.subarray(0, body.indexOf(0)).toString('utf8');
        statements.push(text);
        if (/^set /i.test(text)) socket.write(Buffer.concat([msg('C', Buffer.from('SET\0')), ready]));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: port(server),
    statements,
    get connections() {
      return state.connections;
    },
    get closedByClient() {
      return state.closedByClient;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe("pg-boss's own pool", () => {
  test('announcing a job to a PostgreSQL that accepts and never answers fails after the connect timeout, classified unavailable', async () => {
    const silent = net.createServer(() => undefined);
    const sockets = new Set<net.Socket>();
    silent.on('connection', (s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const queue = new PgBossQueue(`postgres://vitals@127.0.0.1:${port(silent)}/vitals`, {
      expireInSeconds: 30,
      connectTimeoutMs: 300,
    });
    try {
      const started = Date.now();
      const err = await queue.enqueue('cj_0123456789abcdef').catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(isStoreUnavailable(err)).toBe(true);
    } finally {
      await queue.stop();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
});

describe.skipIf(!process.env.VITALS_TEST_DATABASE_URL)("pg-boss's own pool on a real PostgreSQL", () => {
  test('its connections run with the store statement timeout, so a query that runs too long ends (57014, unavailable)', async () => {
    const url = process.env.VITALS_TEST_DATABASE_URL!;
    const schema = `t_pgboss_${Math.random().toString(16).slice(2, 10)}`;
    const queue = new PgBossQueue(url, {
      schema,
      expireInSeconds: 30,
      connectTimeoutMs: 2000,
      statementTimeoutMs: 300,
    });
    const boss = (
      queue as unknown as {
        boss: { start(): Promise<unknown>; getDb(): { executeSql(text: string): Promise<{ rows: any[] }> } };
      }
    ).boss;
    try {
      await boss.start();
      const db = boss.getDb();
      expect((await db.executeSql('show statement_timeout')).rows[0].statement_timeout).toBe('300ms');
      const err = await db.executeSql('select pg_sleep(2)').catch((e: unknown) => e);
      expect(unavailableReason(err)).toBe('57014');
    } finally {
      await queue.stop();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
    }
  });
});
