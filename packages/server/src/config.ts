/**
 * Configuration is read once, at the edge, and frozen (STYLE habit 2). `loadConfig` is the only
 * reader of the environment; everything else receives `config` as an argument.
 */
import path from 'node:path';

export interface Config {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly objectsUrl: string | undefined;
  readonly publicUrl: string | undefined;
  readonly host: string;
  readonly port: number;
  readonly webhookAllowHosts: readonly string[];
  readonly uploadTtlSec: number;
  readonly presignTtlSec: number;
  readonly sessionTokenTtlSec: number;
  readonly idleTimeoutSec: number;
  /** Secret that signs session tokens and upload URLs; generated and kept in the data dir when unset. */
  readonly serverSecret: string | undefined;
  readonly version: string;
}

export class ConfigError extends Error {}

function intFrom(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

export interface ConfigFlags {
  dataDir?: string;
  host?: string;
  port?: number;
}

export const SERVICE_VERSION = '0.1.0';

export function loadConfig(env: Record<string, string | undefined>, flags: ConfigFlags = {}): Config {
  const databaseUrl = env.VITALS_DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('VITALS_DATABASE_URL must start with postgres:// or postgresql://');
  }
  const port = flags.port ?? intFrom(env, 'PORT', 8787);
  return Object.freeze({
    dataDir: path.resolve(flags.dataDir ?? env.VITALS_DATA_DIR ?? './.vitals'),
    databaseUrl,
    objectsUrl: env.VITALS_OBJECTS_URL || undefined,
    publicUrl: env.VITALS_PUBLIC_URL ? env.VITALS_PUBLIC_URL.replace(/\/+$/, '') : undefined,
    host: flags.host ?? env.HOST ?? '127.0.0.1',
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
    serverSecret: env.VITALS_SERVER_SECRET || undefined,
    version: SERVICE_VERSION,
  });
}
