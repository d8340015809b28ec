/**
 * Configuration is read once, at the edge, and frozen (STYLE habit 2). `loadConfig` is the only
 * reader of the environment; everything else receives `config` as an argument.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ipaddr from 'ipaddr.js';
import { ConfigError } from './config-error.js';
import { trustProxyFrom, type TrustProxy } from './trust-proxy.js';

export interface Config {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly objectsUrl: string | undefined;
  /** The S3-compatible object store parsed from `objectsUrl` (undefined: objects in the data dir). */
  readonly s3: S3Settings | undefined;
  readonly publicUrl: string | undefined;
  readonly host: string;
  readonly port: number;
  readonly webhookAllowHosts: readonly string[];
  readonly uploadTtlSec: number;
  readonly presignTtlSec: number;
  readonly sessionTokenTtlSec: number;
  readonly idleTimeoutSec: number;
  /** Usage-log rows older than this many days are deleted (usage-retention.ts); 0 keeps them all. */
  readonly usageLogRetentionDays: number;
  /** PostgreSQL: longest wait for a connection, pooled or new (ms). */
  readonly dbConnectTimeoutMs: number;
  /** PostgreSQL: `statement_timeout` of the store's connections (ms). */
  readonly dbStatementTimeoutMs: number;
  /** PostgreSQL: writes of one batched kind that may wait for a batch before more are refused (503). */
  readonly dbMaxQueuedWrites: number;
  /** Secret that signs session tokens and upload URLs; generated and kept in the data dir when unset. */
  readonly serverSecret: string | undefined;
  readonly version: string;
  /** The console's built pages, served at /console (VITALS_CONSOLE_DIR; default packages/console/dist). */
  readonly consoleDir: string;
  /** The console's payment provider (VITALS_CONSOLE_PAYMENTS: none | manual; console/payments.ts). */
  readonly consolePayments: 'none' | 'manual';
  /**
   * The demo page at `/` and its backend routes `/demo/api/*` (docs/operating.md, "The demo"):
   * `loopback` (the default on a loopback listener: on, for loopback Host names only), `on`
   * (`VITALS_DEMO=1`: any Host), `off` (`VITALS_DEMO=0`, or the default elsewhere).
   */
  readonly demo: DemoMode;
  /** The browser capture's built files, served at `/capture/*` (packages/capture/dist/browser). */
  readonly captureDir: string;
  /**
   * Server processes `serve` runs on one port (`--processes N` / `VITALS_PROCESSES`; `auto`: one
   * per core); 1 serves in the process itself (cli/serve-cluster.ts).
   */
  readonly processes: number;
  /**
   * Worker threads for video jobs (`VITALS_MEDIA_THREADS`; default the cores available, 0: on the
   * main thread as before). Each runs one video at a time with its own face models (docs/media.md,
   * "Worker threads"); the offline estimator of long captures runs on a thread too.
   */
  readonly mediaThreads: number;
  /** How much lower those threads' CPU priority is (`VITALS_MEDIA_NICE`, 0-19; default 10; Linux). */
  readonly mediaNice: number;
  /** Which peers may name the client in X-Forwarded-For (`VITALS_TRUST_PROXY`; trust-proxy.ts). */
  readonly trustProxy: TrustProxy;
  /**
   * How far V8 lets a server process's heap grow past its live size before the next full
   * collection, in percent (`VITALS_HEAP_GROWING_PERCENT`, 0-1000; default 200; 0: V8's own
   * choice). heap-tuning.ts says why.
   */
  readonly heapGrowingPercent: number;
}

export type DemoMode = 'off' | 'loopback' | 'on';

export { ConfigError } from './config-error.js';

/**
 * Defaults of the store's limits on PostgreSQL (docs/operating.md; docs/decisions.md, "Store
 * outages"): fail a request in seconds when the database is slow, saturated or down.
 */
export const DB_LIMIT_DEFAULTS = Object.freeze({
  connectTimeoutMs: 5000,
  statementTimeoutMs: 30_000,
  maxQueuedWrites: 4096,
});

/** Node timers fire at once past 2^31-1 ms; pg's query_timeout is the statement timeout + 1 s. */
const MAX_TIMER_MS = 2_147_483_647;
/** How much longer than statement_timeout pg waits for a reply (store/pg-pool.ts). */
export const QUERY_TIMEOUT_MARGIN_MS = 1000;

/**
 * `VITALS_OBJECTS_URL=s3://bucket[/prefix]?endpoint=http://host:port&region=R&forcePathStyle=true`.
 * Credentials come from `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`),
 * never from the URL; they are behind a function so that printing or serialising the config never
 * shows them.
 */
export interface S3Settings {
  readonly bucket: string;
  /** Key prefix without leading or trailing slash ('' = the bucket's root). */
  readonly prefix: string;
  /** http(s) origin of an S3-compatible server; undefined = AWS S3 itself. */
  readonly endpoint: string | undefined;
  readonly region: string;
  readonly forcePathStyle: boolean;
  readonly credentials: () => { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

const S3_PARAMS = new Set(['endpoint', 'region', 'forcePathStyle']);

function booleanParam(name: string, raw: string): boolean {
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`VITALS_OBJECTS_URL: ${name} must be true or false, got "${raw}"`);
}

/** Parses VITALS_OBJECTS_URL; errors name the variable and never repeat a credential. */
export function parseObjectsUrl(raw: string, env: Record<string, string | undefined>): S3Settings {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError('VITALS_OBJECTS_URL must look like s3://bucket[/prefix]?endpoint=http://host:port');
  }
  if (u.protocol !== 's3:') throw new ConfigError('VITALS_OBJECTS_URL must start with s3://');
  if (u.username || u.password) {
    throw new ConfigError(
      'VITALS_OBJECTS_URL must not carry credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY',
    );
  }
  const bucket = u.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || u.port) {
    throw new ConfigError(`VITALS_OBJECTS_URL: "${bucket}" is not a valid bucket name (3-63 of a-z 0-9 . -)`);
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(u.pathname);
  } catch {
    throw new ConfigError('VITALS_OBJECTS_URL: the key prefix is not valid percent-encoding');
  }
  const prefix = decoded.replace(/^\/+|\/+$/g, '');
  if (prefix && !/^[A-Za-z0-9!_.*'()/-]+$/.test(prefix)) {
    throw new ConfigError("VITALS_OBJECTS_URL: the key prefix may use only letters, digits, / and !_.*'()-");
  }
  // Keys are `<prefix>/<key>`: an empty, "." or ".." segment would make keys that some stores and
  // tools normalise (and so could meet another prefix's objects); the URL parser already folds
  // literal dot segments, but not percent-encoded ones.
  if (prefix && prefix.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) {
    throw new ConfigError('VITALS_OBJECTS_URL: the key prefix may not have empty, "." or ".." segments');
  }
  for (const name of u.searchParams.keys()) {
    if (!S3_PARAMS.has(name))
      throw new ConfigError(`VITALS_OBJECTS_URL: unknown parameter "${name}" (known: ${[...S3_PARAMS].join(', ')})`);
  }
  let endpoint = u.searchParams.get('endpoint') || undefined;
  if (endpoint !== undefined) {
    let e: URL;
    try {
      e = new URL(endpoint);
    } catch {
      throw new ConfigError('VITALS_OBJECTS_URL: endpoint must be an http:// or https:// address');
    }
    if ((e.protocol !== 'http:' && e.protocol !== 'https:') || e.username || e.password || e.search || e.hash) {
      throw new ConfigError(
        'VITALS_OBJECTS_URL: endpoint must be an http:// or https:// address without credentials or query',
      );
    }
    endpoint = e.toString().replace(/\/+$/, '');
  }
  const region = u.searchParams.get('region') || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw new ConfigError(`VITALS_OBJECTS_URL: "${region}" is not a region name`);
  const fps = u.searchParams.get('forcePathStyle');
  // S3-compatible servers (MinIO, Ceph, s3rver) mostly want path-style addressing; AWS prefers virtual hosts.
  const forcePathStyle = fps === null || fps === '' ? endpoint !== undefined : booleanParam('forcePathStyle', fps);
  const accessKeyId = env.AWS_ACCESS_KEY_ID || '';
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY || '';
  const sessionToken = env.AWS_SESSION_TOKEN || undefined;
  if (!accessKeyId || !secretAccessKey) {
    throw new ConfigError('VITALS_OBJECTS_URL is set: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set too');
  }
  // A fresh object per call: the SDK annotates the credentials object it is given.
  const credentials = () => ({ accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) });
  return Object.freeze({ bucket, prefix, endpoint, region, forcePathStyle, credentials });
}

function intFrom(env: Record<string, string | undefined>, name: string, fallback: number, max?: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  if (max !== undefined && n > max) throw new ConfigError(`${name} must be at most ${max}, got "${raw}"`);
  return n;
}

/** `VITALS_USAGE_LOG_RETENTION_DAYS`: 0 (the default) keeps every row; at most 100 years. */
function retentionDaysFrom(env: Record<string, string | undefined>): number {
  const raw = env.VITALS_USAGE_LOG_RETENTION_DAYS;
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 36_500) {
    throw new ConfigError(
      `VITALS_USAGE_LOG_RETENTION_DAYS must be a whole number of days from 0 (keep all) to 36500, got "${raw}"`,
    );
  }
  return n;
}

/** A loopback listening host: `localhost`, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(h)) return false;
  const a = ipaddr.process(h);
  return a.range() === 'loopback';
}

function demoFrom(env: Record<string, string | undefined>, host: string): DemoMode {
  const raw = env.VITALS_DEMO;
  if (raw === undefined || raw === '') return isLoopbackHost(host) ? 'loopback' : 'off';
  if (raw === '1' || raw === 'true' || raw === 'on') return 'on';
  if (raw === '0' || raw === 'false' || raw === 'off') return 'off';
  throw new ConfigError(`VITALS_DEMO must be 1 (on) or 0 (off), got "${raw}"`);
}

/** packages/capture/dist/browser, from this module's place (src/ or dist/ of packages/server). */
const DEFAULT_CAPTURE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../capture/dist/browser');

export interface ConfigFlags {
  dataDir?: string;
  host?: string;
  port?: number;
  /** `--processes`: a count or `auto`, as VITALS_PROCESSES. */
  processes?: string;
}

/** Most server processes one `serve` starts. */
export const MAX_PROCESSES = 64;

/** `--processes` / `VITALS_PROCESSES`: 1..64, or `auto` (one per core the process may use). */
function processesFrom(env: Record<string, string | undefined>, flag: string | undefined): number {
  const raw = flag ?? env.VITALS_PROCESSES;
  const name = flag !== undefined ? '--processes' : 'VITALS_PROCESSES';
  if (raw === undefined || raw === '') return 1;
  if (raw === 'auto') return Math.min(MAX_PROCESSES, Math.max(1, os.availableParallelism()));
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PROCESSES)
    throw new ConfigError(`${name} must be auto or a whole number from 1 to ${MAX_PROCESSES}, got "${raw}"`);
  return n;
}

export const SERVICE_VERSION = '0.1.0';

/** packages/console/dist, from this module in packages/server/src or packages/server/dist. */
const DEFAULT_CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../console/dist');

function consolePaymentsFrom(env: Record<string, string | undefined>): 'none' | 'manual' {
  const raw = env.VITALS_CONSOLE_PAYMENTS || 'none';
  if (raw !== 'none' && raw !== 'manual')
    throw new ConfigError(`VITALS_CONSOLE_PAYMENTS must be none or manual, got "${raw}"`);
  return raw;
}

export function loadConfig(env: Record<string, string | undefined>, flags: ConfigFlags = {}): Config {
  const databaseUrl = env.VITALS_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('VITALS_DATABASE_URL must start with postgres:// or postgresql://');
  }
  const port = flags.port ?? intFrom(env, 'PORT', 8787);
  const objectsUrl = env.VITALS_OBJECTS_URL || undefined;
  const host = flags.host ?? env.HOST ?? '127.0.0.1';
  return Object.freeze({
    dataDir: path.resolve(flags.dataDir ?? env.VITALS_DATA_DIR ?? './.vitals'),
    databaseUrl,
    objectsUrl,
    s3: objectsUrl ? parseObjectsUrl(objectsUrl, env) : undefined,
    publicUrl: env.VITALS_PUBLIC_URL ? env.VITALS_PUBLIC_URL.replace(/\/+$/, '') : undefined,
    host,
    port,
    webhookAllowHosts: Object.freeze(
      (env.VITALS_WEBHOOK_ALLOW_HOSTS ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
    uploadTtlSec: intFrom(env, 'VITALS_UPLOAD_TTL_SEC', 3600),
    presignTtlSec: intFrom(env, 'VITALS_PRESIGN_TTL_SEC', 900),
    sessionTokenTtlSec: intFrom(env, 'VITALS_SESSION_TOKEN_TTL_SEC', 300),
    idleTimeoutSec: intFrom(env, 'VITALS_IDLE_TIMEOUT_SEC', 10),
    usageLogRetentionDays: retentionDaysFrom(env),
    dbConnectTimeoutMs: intFrom(env, 'VITALS_DB_CONNECT_TIMEOUT_MS', DB_LIMIT_DEFAULTS.connectTimeoutMs, MAX_TIMER_MS),
    dbStatementTimeoutMs: intFrom(
      env,
      'VITALS_DB_STATEMENT_TIMEOUT_MS',
      DB_LIMIT_DEFAULTS.statementTimeoutMs,
      MAX_TIMER_MS - QUERY_TIMEOUT_MARGIN_MS,
    ),
    dbMaxQueuedWrites: intFrom(env, 'VITALS_DB_MAX_QUEUED_WRITES', DB_LIMIT_DEFAULTS.maxQueuedWrites, 1_000_000),
    serverSecret: env.VITALS_SERVER_SECRET || undefined,
    version: SERVICE_VERSION,
    consoleDir: path.resolve(env.VITALS_CONSOLE_DIR || DEFAULT_CONSOLE_DIR),
    consolePayments: consolePaymentsFrom(env),
    demo: demoFrom(env, host),
    captureDir: path.resolve(env.VITALS_CAPTURE_DIR || DEFAULT_CAPTURE_DIR),
    processes: processesFrom(env, flags.processes),
    mediaThreads: mediaThreadsFrom(env),
    mediaNice: mediaNiceFrom(env),
    trustProxy: trustProxyFrom(env.VITALS_TRUST_PROXY),
    heapGrowingPercent: heapGrowingPercentFrom(env),
  });
}

/** `VITALS_HEAP_GROWING_PERCENT`: 0 (V8's own growing factor) to 1000; default 200 (heap-tuning.ts). */
function heapGrowingPercentFrom(env: Record<string, string | undefined>): number {
  const raw = env.VITALS_HEAP_GROWING_PERCENT;
  if (raw === undefined || raw === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 1000)
    throw new ConfigError(
      `VITALS_HEAP_GROWING_PERCENT must be a whole number from 0 (V8's default) to 1000, got "${raw}"`,
    );
  return n;
}

/** The heap's growth past its live size before a full collection, percent (heap-tuning.ts). */
export const DEFAULT_HEAP_GROWING_PERCENT = 200;

/** `VITALS_MEDIA_NICE`: 0 (the main thread's priority) to 19; default 10. */
function mediaNiceFrom(env: Record<string, string | undefined>): number {
  const raw = env.VITALS_MEDIA_NICE;
  if (raw === undefined || raw === '') return 10;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 19)
    throw new ConfigError(`VITALS_MEDIA_NICE must be a whole number from 0 to 19, got "${raw}"`);
  return n;
}

/** `VITALS_MEDIA_THREADS`: 0 (video jobs on the main thread) to 256; default the cores available. */
function mediaThreadsFrom(env: Record<string, string | undefined>): number {
  const raw = env.VITALS_MEDIA_THREADS;
  if (raw === undefined || raw === '') return os.availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 256)
    throw new ConfigError(`VITALS_MEDIA_THREADS must be a whole number from 0 (main thread) to 256, got "${raw}"`);
  return n;
}
