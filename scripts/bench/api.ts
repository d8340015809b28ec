// API throughput (issue 2): signed, stored `POST /sdk/v1/measurements` against the unsigned trivial
// `GET /health`, measured in the same run on a real listening server, on SQLite and on PostgreSQL.
// The server runs in its own child process (buildServer, the whole signature layer and store); a
// load-generator child process keeps N requests in flight over keep-alive connections and signs
// every request afresh (NCS1: new nonce, exact body bytes). Memory: the server's RSS at the start,
// middle and end of a 100k-request run (`--quick`: 10k). One file, three roles (ROLE env).
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { splitSection, type HeadlineRow, type SectionOutput } from '../headline.js';

const SELF = fileURLToPath(import.meta.url);
const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
/**
 * Requests in flight (BENCH_API_CONCURRENCY to change). Throughput is a capacity figure only when a
 * route keeps the cores busy, which the table's "cores busy" column shows. At 32 a signed call's
 * wait for its group commit (the response waits for the commit) left about a tenth of the cores
 * idle during the signed slices while the trivial route saturated them; at 64 both routes run the
 * cores equally busy (docs/benchmarks.md, API).
 */
const CONCURRENCY = Number(process.env.BENCH_API_CONCURRENCY ?? 64);
const WARMUP_MS = QUICK ? 1000 : 3000;
const MEASURE_MS = QUICK ? 4000 : 10_000;
const LONG_RUN = QUICK ? 10_000 : 100_000;
/**
 * The two routes are measured in alternating slices (health, signed, health, signed, ...), MEASURE_MS
 * per route in all: the machine is shared, and other work that comes and goes for seconds at a time
 * then falls on both routes alike instead of on whichever ran during it.
 */
const SLICES = 10;
const PG_URL =
  process.env.VITALS_BENCH_DATABASE_URL ??
  process.env.VITALS_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';

type Msg = { id: number; op: string; [k: string]: any };

function serveIpc(handlers: Record<string, (m: Msg) => Promise<unknown>>): void {
  process.on('message', async (m: Msg) => {
    try {
      process.send!({ id: m.id, ok: true, data: await handlers[m.op](m) });
    } catch (err) {
      process.send!({ id: m.id, ok: false, error: String((err as Error)?.stack ?? err) });
    }
  });
}

// ---- role: server ------------------------------------------------------------------------------

async function serverRole(): Promise<void> {
  const { loadConfig } = await import('../../packages/server/src/config.js');
  const { createContext, closeContext } = await import('../../packages/server/src/deps.js');
  const { buildServer } = await import('../../packages/server/src/server.js');
  const { openDatabase } = await import('../../packages/server/src/store/db.js');
  const { makeKey } = await import('../../packages/server/src/testing.js');
  const { randomHex } = await import('@vitals/protocol');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vitals-bench-api-'));
  const url = process.env.BENCH_DB === 'postgres' ? PG_URL : undefined;
  const schema = url ? `bench_${randomHex(4)}` : undefined;
  if (url && schema) {
    const admin = openDatabase({ databaseUrl: url, poolSize: 1 });
    await admin.db.schema.createSchema(schema).execute();
    await admin.close();
  }
  const config = loadConfig({ VITALS_DATA_DIR: dataDir });
  const db = url ? openDatabase({ databaseUrl: url, pgSchema: schema, poolSize: 10 }) : undefined;
  const ctx = await createContext(config, { db });
  const { app } = await buildServer(ctx);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const key = await makeKey(ctx);
  serveIpc({
    info: async () => ({ port, key }),
    cpu: async () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
    rss: async () => {
      (globalThis as any).gc?.();
      return process.memoryUsage().rss / 2 ** 20;
    },
    stop: async () => {
      await app.close();
      await closeContext(ctx);
      if (url && schema) {
        const admin = openDatabase({ databaseUrl: url, poolSize: 1 });
        await admin.db.schema.dropSchema(schema).cascade().execute();
        await admin.close();
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
      setImmediate(() => process.exit(0));
      return true;
    },
  });
  process.send!({ ready: true });
}

// ---- role: load generator ----------------------------------------------------------------------

interface LoadResult {
  /** Every request's latency in ms, sorted (only when asked for, to merge slices). */
  lat?: number[];
  requests: number;
  errors: number;
  statusCounts: Record<string, number>;
  elapsedMs: number;
  p50: number;
  p99: number;
}

/**
 * NCS1 headers with node:crypto (the protocol package's WebCrypto `signRequest` computes the same;
 * its vectors are in packages/protocol/test/ncs1.test.ts). Synchronous, so the generator spends as
 * little of the shared cores as it can.
 */
function signNode(
  keyId: string,
  secretHashHex: string,
  method: string,
  p: string,
  body: string,
): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = randomBytes(12).toString('hex');
  const canonical = ['NCS1', method, p, timestamp, nonce, createHash('sha256').update(body).digest('hex')].join('\n');
  const signature = createHmac('sha256', secretHashHex).update(canonical).digest('base64');
  return { 'x-key-id': keyId, 'x-timestamp': timestamp, 'x-nonce': nonce, 'x-signature': signature };
}

async function loadRole(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({
    source: 'web',
    durationSec: 60,
    isComplete: true,
    sdkVersion: '1.0.0',
    quality: { level: 'good', score: 0.9, usable: true },
    cardiac: { heartRate: { value: 72, unit: 'bpm', confidence: 0.9 } },
    hrv: { sdnnMs: 50, rmssdMs: 40, pnn50Pct: 20 },
    respiratory: { breathingRate: { value: 14, unit: 'brpm' } },
    stress: { index: 120, level: 'low', unit: 'index' },
    userRef: 'bench-user',
  });

  function once(port: number, kind: string, key: { keyId: string; secret: string }): Promise<number> {
    return (async () => {
      let headers: Record<string, string> = {};
      let payload: string | undefined;
      let method = 'GET';
      let p = '/health';
      if (kind === 'measure') {
        method = 'POST';
        p = '/sdk/v1/measurements';
        payload = body;
        headers = {
          ...signNode(key.keyId, createHash('sha256').update(key.secret).digest('hex'), method, p, body),
          'content-type': 'application/json',
        };
      }
      return new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, path: p, method, headers, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(payload);
      });
    })();
  }

  async function drive(m: Msg): Promise<LoadResult> {
    const { port, kind, key, durationMs, count, raw } = m as any;
    const lat: number[] = [];
    const statusCounts: Record<string, number> = {};
    let started = 0;
    let errors = 0;
    const t0 = performance.now();
    const more = () => (count ? started < count : performance.now() - t0 < durationMs);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (more()) {
          started++;
          const s = performance.now();
          try {
            const status = await once(port, kind, key);
            statusCounts[status] = (statusCounts[status] ?? 0) + 1;
            if (status >= 300) errors++;
          } catch {
            errors++;
          }
          lat.push(performance.now() - s);
        }
      }),
    );
    const elapsedMs = performance.now() - t0;
    lat.sort((a, b) => a - b);
    const q = (f: number) => lat[Math.min(lat.length - 1, Math.floor(f * lat.length))] ?? NaN;
    return {
      ...(raw ? { lat } : {}),
      requests: lat.length,
      errors,
      statusCounts,
      elapsedMs,
      p50: q(0.5),
      p99: q(0.99),
    };
  }
  serveIpc({
    drive,
    cpu: async () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
  });
  process.send!({ ready: true });
}

// ---- parent ------------------------------------------------------------------------------------

interface Child {
  proc: ChildProcess;
  call(op: string, args?: Record<string, unknown>): Promise<any>;
  stop(waitMs?: number): Promise<void>;
}

function spawnRole(role: string, env: Record<string, string> = {}): Promise<Child> {
  const proc = fork(SELF, [], {
    env: { ...process.env, ROLE: role, ...env },
    // BENCH_API_SERVER_ARGS: extra node flags for the server process (e.g. --cpu-prof), for profiling.
    execArgv: [
      ...process.execArgv,
      '--conditions=source',
      '--expose-gc',
      ...(role === 'server' ? (process.env.BENCH_API_SERVER_ARGS?.split(' ').filter(Boolean) ?? []) : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let seq = 0;
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  return new Promise((resolve, reject) => {
    proc.on('message', (m: any) => {
      if (m.ready) {
        resolve({
          proc,
          call: (op, args = {}) =>
            new Promise((res, rej) => {
              const id = ++seq;
              pending.set(id, { resolve: res, reject: rej });
              proc.send({ id, op, ...args });
            }),
          stop: async (waitMs = 0) => {
            // A process asked to stop exits by itself (a --cpu-prof profile is written on exit); give it a moment.
            if (proc.exitCode === null && waitMs > 0)
              await Promise.race([new Promise((r) => proc.once('exit', r)), new Promise((r) => setTimeout(r, waitMs))]);
            if (proc.exitCode === null) proc.kill('SIGTERM');
          },
        });
        return;
      }
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.ok) p.resolve(m.data);
      else p.reject(new Error(m.error));
    });
    proc.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
}

async function pgReachable(): Promise<string | null> {
  try {
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
    await c.connect();
    await c.query('select 1');
    await c.end();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * CPU seconds used so far by every process named `postgres` on this machine (Linux /proc; null
 * elsewhere). The bench's database server is local, so this is its backends' and writers' work.
 */
function postgresCpuMs(): number | null {
  try {
    const hz = 100; // USER_HZ on Linux
    let ticks = 0;
    for (const pid of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        if (!comm.startsWith('postgres')) continue;
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks += Number(f[11]) + Number(f[12]);
      } catch {
        // the process ended meanwhile
      }
    }
    return (ticks / hz) * 1000;
  } catch {
    return null;
  }
}

/** CPU milliseconds per request of the server process and of PostgreSQL while one route was driven. */
interface CpuCost {
  serverMs: number;
  /** The load generator's (signing and sending). */
  loadMs: number;
  postgresMs: number | null;
}

interface DbFigures {
  db: string;
  health: LoadResult;
  measure: LoadResult;
  healthCpu: CpuCost;
  measureCpu: CpuCost;
  /** Signed ÷ trivial throughput of each pair of slices. */
  sliceRatios: number[];
  rss: [number, number, number];
  longRun: LoadResult;
}

async function measureOn(db: 'sqlite' | 'postgres'): Promise<DbFigures> {
  const server = await spawnRole('server', { BENCH_DB: db });
  const load = await spawnRole('load');
  try {
    const { port, key } = await server.call('info');
    const drive = (kind: string, extra: Record<string, unknown>) => load.call('drive', { port, kind, key, ...extra });
    // Warm both paths, then measure them in alternating slices of the same run.
    await drive('health', { durationMs: WARMUP_MS });
    await drive('measure', { durationMs: WARMUP_MS });
    // CPU per request of the server process (and of PostgreSQL): unlike throughput, it hardly moves
    // with what else the shared machine is running.
    const slices: Record<'health' | 'measure', LoadResult[]> = { health: [], measure: [] };
    const cpu = { health: { server: 0, pg: 0, load: 0 }, measure: { server: 0, pg: 0, load: 0 } };
    for (let i = 0; i < SLICES; i++) {
      for (const kind of ['health', 'measure'] as const) {
        const [s0, p0, l0] = [await server.call('cpu'), postgresCpuMs() ?? NaN, await load.call('cpu')];
        slices[kind].push(await drive(kind, { durationMs: MEASURE_MS / SLICES, raw: true }));
        const [s1, p1, l1] = [await server.call('cpu'), postgresCpuMs() ?? NaN, await load.call('cpu')];
        cpu[kind].server += s1 - s0;
        cpu[kind].pg += p1 - p0;
        cpu[kind].load += l1 - l0;
      }
    }
    const health = merge(slices.health);
    const measure = merge(slices.measure);
    const costOf = (kind: 'health' | 'measure', r: LoadResult): CpuCost => ({
      serverMs: cpu[kind].server / r.requests,
      loadMs: cpu[kind].load / r.requests,
      // Backends that exit during a slice take their ticks with them: a small negative is zero.
      postgresMs: db === 'postgres' && Number.isFinite(cpu[kind].pg) ? Math.max(0, cpu[kind].pg / r.requests) : null,
    });
    const healthCpu = costOf('health', health);
    const measureCpu = costOf('measure', measure);
    const sliceRatios = slices.measure.map((m, i) => rps(m) / rps(slices.health[i]));
    // Long run: RSS at start, middle, end.
    const r0 = await server.call('rss');
    const a = await drive('measure', { count: LONG_RUN / 2 });
    const r1 = await server.call('rss');
    const b = await drive('measure', { count: LONG_RUN / 2 });
    const r2 = await server.call('rss');
    const longRun: LoadResult = {
      requests: a.requests + b.requests,
      errors: a.errors + b.errors,
      statusCounts: {},
      elapsedMs: a.elapsedMs + b.elapsedMs,
      p50: (a.p50 + b.p50) / 2,
      p99: Math.max(a.p99, b.p99),
    };
    return { db, health, measure, healthCpu, measureCpu, sliceRatios, rss: [r0, r1, r2], longRun };
  } finally {
    await server.call('stop').catch(() => undefined);
    await load.stop();
    await server.stop(5000);
  }
}

const rps = (r: LoadResult) => (r.requests / r.elapsedMs) * 1000;

/** One result from the slices of a route: requests and time add up, percentiles over every request. */
function merge(parts: LoadResult[]): LoadResult {
  const lat = parts.flatMap((p) => p.lat ?? []).sort((a, b) => a - b);
  const q = (f: number) => lat[Math.min(lat.length - 1, Math.floor(f * lat.length))] ?? NaN;
  const statusCounts: Record<string, number> = {};
  for (const p of parts)
    for (const [k, v] of Object.entries(p.statusCounts)) statusCounts[k] = (statusCounts[k] ?? 0) + v;
  return {
    requests: parts.reduce((n, p) => n + p.requests, 0),
    errors: parts.reduce((n, p) => n + p.errors, 0),
    statusCounts,
    elapsedMs: parts.reduce((n, p) => n + p.elapsedMs, 0),
    p50: q(0.5),
    p99: q(0.99),
  };
}
const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '–');
const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');
const f2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '–');
const f3 = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '–');

const NOTE =
  "Reading the figures: the ratio compares a route that does no I/O with one that verifies an HMAC, parses and validates a JSON body and writes three rows (the nonce, the measurement and its usage-log row, all or none), on two shared cores that also run the load generator and, here, other tenants' work, so it moves with the machine's load; run the command several times and compare ratios (the per-slice column shows the spread within one run). " +
  "When the cores are the limit, the ratio follows the CPU columns: the trivial route costs the server and the generator about 0.15-0.19 ms a request, the signed one about 0.41-0.55 ms with PostgreSQL's share, of which the generator (signing and sending) is 0.15-0.19 ms. " +
  "The ratio moves with the trivial route: on an Intel Xeon 2.5 GHz with the tree of 2026-11-24 the server spent 0.083 ms on it and 0.256 ms on the signed one on SQLite (0.40); on an AMD EPYC with the tree of 2026-11-28, 0.035 and 0.192 ms (0.20). On the EPYC, quick runs of both trees in alternation gave the trivial route 0.067-0.069 ms (2026-11-24) against 0.048-0.061 ms (2026-11-28) and the signed one 0.200-0.231 against 0.211-0.264 ms: the trivial route got cheaper, with the faster core and with the code, while the signed one did not move beyond the noise. Its largest items in a CPU profile are SQLite's own insert and commit work (about a fifth of the server's time) and the socket writes. " +
  'What makes the signed call cheaper than in the first measurement (0.15 on SQLite, 0.09 on PostgreSQL; docs/decisions.md, "Signed writes"): calls that arrive together share one commit — on SQLite one transaction with a savepoint per call, on PostgreSQL one multi-row statement (rows as JSON arrays, `json_populate_recordset`) with at most two in flight — and each response is sent only after its commit; the nonce is spent in the same write as the measurement (one round trip and one commit per batch, the spec\'s order of checks kept: a replay is still nonce_reused first); ' +
  'on PostgreSQL the hot statements are named prepared statements (parsed and planned once per connection); WAL checkpoints of SQLite run in a worker thread; the hot-path inserts are built by Kysely once and re-bound; ids come from a pool of random bytes; the signature check runs synchronously on node:crypto.';

function memoryNote(r: DbFigures): string {
  const second = r.rss[2] - r.rss[1];
  // RSS falling (the heap settling after warm-up) is not growth.
  return `${r.db}: ${second < 5 ? 'flat' : 'GROWING'} (${f1(second)} MB over the second half of ${r.longRun.requests} signed, stored requests)`;
}

export async function run(): Promise<SectionOutput> {
  const results: DbFigures[] = [];
  // BENCH_API_DBS=postgres (or sqlite) measures one store only, for profiling; the doc section wants both.
  const only = process.env.BENCH_API_DBS?.split(',');
  if (!only || only.includes('sqlite')) results.push(await measureOn('sqlite'));
  const pgError = !only || only.includes('postgres') ? await pgReachable() : null;
  if (!pgError && (!only || only.includes('postgres'))) results.push(await measureOn('postgres'));
  const lines = [
    '## API',
    '',
    `Measured by \`scripts/bench/api.ts\` (\`npm run bench -- api${QUICK ? ' --quick' : ''}\`) on this machine (${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; load average ${os.loadavg()[0].toFixed(1)} when the run ended — the machine is shared). ` +
      'The server is its own process (`buildServer`, real listening socket on loopback); a load-generator process keeps ' +
      `${CONCURRENCY} requests in flight over keep-alive connections for ${MEASURE_MS / 1000} s per route after a ${WARMUP_MS / 1000} s warm-up (the routes alternate in ${SLICES} slices of ${MEASURE_MS / SLICES / 1000} s each, so load from other work on the machine falls on both alike), and signs every \`POST /sdk/v1/measurements\` afresh (new nonce, SHA-256 of the body, HMAC; node:crypto) — generator and server share the same cores, so the figures are a lower bound. ` +
      "Each signed call goes through the whole path: signature check, JSON parse and schema validation, then the nonce, the measurement and its usage-log row stored together. CPU per request: the server process (all its threads) and every `postgres` process of the machine, over the route's slices; cores busy: those two and the generator together, as a share of the machine's cores. The reference is the unsigned `GET /health` of the same server in the same run.",
    '',
    '| database | route | requests/s | p50 ms | p99 ms | non-2xx | CPU ms/request: server | PostgreSQL | load generator | cores busy |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  // Share of the machine's cores the three processes kept busy while the route was driven.
  const busy = (r: LoadResult, c: CpuCost) =>
    `${f0(((rps(r) * (c.serverMs + (c.postgresMs ?? 0) + c.loadMs)) / 1000 / os.cpus().length) * 100)} %`;
  const cpu = (r: LoadResult, c: CpuCost) =>
    `${f3(c.serverMs)} | ${c.postgresMs === null ? '–' : f3(c.postgresMs)} | ${f3(c.loadMs)} | ${busy(r, c)}`;
  for (const r of results) {
    lines.push(
      `| ${r.db} | \`GET /health\` (trivial, unsigned) | ${f0(rps(r.health))} | ${f2(r.health.p50)} | ${f2(r.health.p99)} | ${r.health.errors} | ${cpu(r.health, r.healthCpu)} |`,
    );
    lines.push(
      `| ${r.db} | signed \`POST /sdk/v1/measurements\` (stored) | ${f0(rps(r.measure))} | ${f2(r.measure.p50)} | ${f2(r.measure.p99)} | ${r.measure.errors} | ${cpu(r.measure, r.measureCpu)} |`,
    );
  }
  lines.push(
    '',
    '| database | signed ÷ trivial throughput | per slice | target | long run | server RSS start / middle / end | RSS growth |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const r of results) {
    const ratio = rps(r.measure) / rps(r.health);
    lines.push(
      `| ${r.db} | ${f2(ratio)} | ${r.sliceRatios.map(f2).join(', ')} | ≥ 0.33 ${ratio >= 1 / 3 ? '(met)' : '(not met)'} | ${r.longRun.requests} signed POSTs, ${f0(rps(r.longRun))}/s, ${r.longRun.errors} non-2xx | ${f1(r.rss[0])} / ${f1(r.rss[1])} / ${f1(r.rss[2])} MB | ${f1(r.rss[2] - r.rss[0])} MB (${f1(r.rss[2] - r.rss[1])} MB in the second half) |`,
    );
  }
  lines.push('', NOTE, '', `Memory: ${results.map(memoryNote).join('; ')}.`);
  if (pgError)
    lines.push('', `PostgreSQL: not measured — ${PG_URL.replace(/\/\/[^@]*@/, '//')} unreachable (${pgError}).`);
  const headline: HeadlineRow[] = results.map((r) => {
    const ratio = rps(r.measure) / rps(r.health);
    return {
      area: 'API',
      figure: `signed, stored \`POST /sdk/v1/measurements\` throughput, ${r.db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`,
      value: `${f0(rps(r.measure))}/s (${f2(ratio)} of the reference)`,
      target: '≥ 0.33 of the reference',
      met: ratio >= 1 / 3,
      reference: `unsigned \`GET /health\` of the same server, same run (${f0(rps(r.health))}/s)`,
      command: '`npm run bench -- api`',
    };
  });
  return { markdown: lines.join('\n'), headline };
}

// ---- entry -------------------------------------------------------------------------------------

if (process.env.ROLE === 'server') void serverRole();
else if (process.env.ROLE === 'load') void loadRole();
else if (process.argv[1] && path.resolve(process.argv[1]) === SELF)
  run().then((out) => console.log(splitSection(out).markdown));
